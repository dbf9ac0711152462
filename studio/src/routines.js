// The routine browser: the API's filters (tag, style, intensity, tempo, duration), the matches,
// each routine's downloads and, for a key that may watch jobs, a Play button that opens its dance
// in the 3D player. Read-only fitness keys see only this.
import { api } from './api.js';
import { button, el } from './dom.js';

export function downloadList(list, links) {
  list.replaceChildren(...links.map((link) => el('li', {},
    el('a', { href: link.url, textContent: `${link.kind}: ${link.filename}`, download: link.filename }))));
}

/**
 * Wire the filter form to the results; returns the function that finds (again) with the form's filters.
 * @param {object} hooks styleChoices(), onError(message, err), onPlay(routine) or null when the key cannot play
 */
export function setUpRoutines(form, results, { styleChoices, onError, onPlay }) {
  const styles = form.elements.style;
  for (const choice of styleChoices()) if (choice !== 'auto') styles.add(new Option(choice, choice));

  async function find() {
    const query = new URLSearchParams();
    for (const input of form.elements) if (input.name && input.value !== '') query.set(input.name, input.value);
    try {
      const answer = await api('GET', `/v1/routines?${query}`);
      if (!answer.items.length) {
        results.replaceChildren(el('p', { textContent: 'No routine matches these filters.' }));
        return;
      }
      results.replaceChildren(...answer.items.map((r) => {
        const files = el('ul', { className: 'downloads' });
        const facts = [r.style, `${r.tempo_bpm.toFixed(0)} BPM`, `${Math.round(r.duration_s)} s`, `${r.intensity_level} intensity`];
        if (r.tags.length) facts.push(`tags: ${r.tags.join(', ')}`);
        const more = button('Downloads', async () => {
          try { downloadList(files, (await api('GET', `/v1/routines/${r.id}`)).downloads ?? []); } catch (err) { onError(err.message, err); }
        });
        const row = el('div', { className: 'routine' },
          el('div', { className: 'what' }, el('strong', { textContent: r.title }), el('span', { className: 'muted', textContent: ` · ${facts.join(' · ')}` })),
          el('div', { className: 'actions' }, onPlay ? button('Play', () => onPlay(r)) : null, more), files);
        row.dataset.routine = r.id;
        return row;
      }));
    } catch (err) {
      onError(err.message, err);
    }
  }
  form.onsubmit = (event) => { event.preventDefault(); find(); };
  return find;
}
