// The forms a take's row and an album's header open: render a song again, publish a take, publish
// the whole album. Each says in its row what it did (the board's notes), in sentences.
import { api } from './api.js';
import { el } from './dom.js';

function labelled(text, input) {
  return el('label', {}, `${text} `, input);
}

function tagList(text) {
  return text.split(',').map((t) => t.trim()).filter(Boolean);
}

/** Render the song of `job` again with another seed and style: a take listed under its album song. */
export function rerenderForm(board, job) {
  const seed = el('input', { type: 'number', min: 0, step: 1, value: job.options.seed + 1, size: 6 });
  const style = el('select');
  for (const choice of board.hooks.styleChoices()) style.add(new Option(choice, choice, false, choice === job.options.style));
  const addsGlb = !job.options.formats.includes('glb');
  const form = el('form', { className: 'row-form' },
    labelled('seed', seed), labelled('style', style),
    el('button', { type: 'submit', textContent: 'Render' }),
    addsGlb ? el('span', { className: 'muted', textContent: 'glb is added, so the take plays in 3D.' }) : null);
  form.onsubmit = async (event) => {
    event.preventDefault();
    const formats = addsGlb ? [...job.options.formats, 'glb'] : job.options.formats;
    const options = { ...job.options, seed: Number(seed.value), style: style.value, formats };
    const song = job.rerender_of ?? job.id;
    board.closeForm(job.id);
    await board.act(song, 'POST', `/v1/jobs/${job.id}/rerender`, { options }, (take) => (take.deduplicated
      ? `That take exists already: ${options.style}, seed ${options.seed} is the one rendered at ${new Date(take.created_at * 1000).toLocaleTimeString()}`
      : `Rendering again as ${options.style}, seed ${options.seed}: the new take is listed under this song`));
  };
  return form;
}

/** Publish one take as a routine, with a title and tags. */
export function publishForm(board, job) {
  const title = el('input', { value: job.track_name.replace(/\.[^.]+$/, ''), size: 24, required: true, maxLength: 200 });
  const tags = el('input', { placeholder: 'warm-up, cardio', size: 18 });
  const form = el('form', { className: 'row-form' },
    labelled('title', title), labelled('tags', tags), el('button', { type: 'submit', textContent: 'Publish' }));
  form.onsubmit = async (event) => {
    event.preventDefault();
    const body = { job_id: job.id, title: title.value, tags: tagList(tags.value) };
    board.closeForm(job.id);
    const routine = await board.act(job.id, 'POST', '/v1/routines', body,
      (r) => `Published as “${r.title}” (${r.intensity_level} intensity, ${Math.round(r.tempo_bpm)} BPM); fitness apps find it now`);
    if (routine) board.hooks.onPublished?.();
  };
  return form;
}

/** Publish every song of an album once (its newest finished take), with tags; the album's name is added. */
export function publishAlbumForm(board, album) {
  const tags = el('input', { placeholder: 'warm-up, cardio', size: 18 });
  const count = album.songs.length;
  const form = el('form', { className: 'row-form' },
    el('span', { textContent: `Each of the ${count} songs once, as its newest finished take, titled by its name${album.name ? ` and tagged “${album.name.toLowerCase()}”` : ''}.` }),
    labelled('tags', tags), el('button', { type: 'submit', textContent: 'Publish the album' }));
  form.onsubmit = async (event) => {
    event.preventDefault();
    board.closeForm(album.id);
    const answer = await board.act(album.id, 'POST', `/v1/batches/${album.id}/publish`, { tags: tagList(tags.value) }, (a) => {
      const made = a.published.map((r) => `“${r.title}”`).join(', ');
      const left = a.skipped.map((s) => `${s.track_name}: ${s.reason.replace(/\.$/, '')}`).join('; ');
      const words = a.published.length ? `Published ${a.published.length} song${a.published.length > 1 ? 's' : ''} as routines: ${made}` : 'Nothing was published';
      return left ? `${words}. Left out: ${left}` : words;
    });
    if (answer?.published.length) board.hooks.onPublished?.();
  };
  return form;
}
