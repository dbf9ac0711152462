// The routine browser: the API's filters (tag, style, intensity, tempo, duration), the matches,
// and each routine's downloads. Read-only fitness keys see only this.
import { api } from './api.js';

export function downloadList(list, links) {
  list.replaceChildren(...links.map((link) => {
    const a = Object.assign(document.createElement('a'), { href: link.url, textContent: `${link.kind}: ${link.filename}`, download: link.filename });
    const li = document.createElement('li');
    li.append(a);
    return li;
  }));
}

export function setUpRoutines(form, results, { styleChoices, onError }) {
  const styles = form.elements.style;
  for (const choice of styleChoices()) if (choice !== 'auto') styles.add(new Option(choice, choice));

  async function find() {
    const query = new URLSearchParams();
    for (const input of form.elements) if (input.name && input.value !== '') query.set(input.name, input.value);
    try {
      const answer = await api('GET', `/v1/routines?${query}`);
      if (!answer.items.length) {
        results.replaceChildren(Object.assign(document.createElement('p'), { textContent: 'No routine matches these filters.' }));
        return;
      }
      results.replaceChildren(...answer.items.map((r) => {
        const div = Object.assign(document.createElement('div'), { className: 'routine' });
        const head = document.createElement('strong');
        head.textContent = r.title;
        const facts = document.createElement('span');
        facts.textContent = ` · ${r.style} · ${r.tempo_bpm.toFixed(0)} BPM · ${Math.round(r.duration_s)} s · ${r.intensity_level} intensity${r.tags.length ? ` · tags: ${r.tags.join(', ')}` : ''} `;
        const files = Object.assign(document.createElement('ul'), { className: 'downloads' });
        const more = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Downloads' });
        more.onclick = async () => {
          try { downloadList(files, (await api('GET', `/v1/routines/${r.id}`)).downloads ?? []); } catch (err) { onError(err.message, err); }
        };
        div.append(head, facts, more, files);
        return div;
      }));
    } catch (err) {
      onError(err.message, err);
    }
  }
  form.onsubmit = (event) => { event.preventDefault(); find(); };
  return find;
}
