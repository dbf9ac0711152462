// Upload and render: the options form (built from GET /v1/options, so a new job option appears
// without a change here), songs or a whole folder by drag and drop or the pickers, per-file
// progress, and one named album (a batch) of jobs for the songs of one drop.
import { api, ApiError, plainWords, sendWithProgress, sentence, xhrError } from './api.js';
import { el } from './dom.js';

/** The choices of an option field that are still offered: a deprecated style (it has a note) is not. */
export function offeredChoices(field) {
  return (field.choices ?? []).filter((choice) => !field.notes?.[choice]);
}

/** Fill `container` with one input per job option; returns a function reading the chosen options. */
export function buildOptionsForm(container, fields) {
  container.replaceChildren();
  const readers = [];
  for (const raw of fields) {
    const field = { ...raw, choices: raw.choices ? offeredChoices(raw) : raw.choices };
    const label = document.createElement('label');
    label.title = field.description;
    label.append(`${field.name.replaceAll('_', ' ')} `);
    if (field.choices && field.multiple) {
      const chosen = new Set(field.default ?? []);
      if (field.name === 'formats' && field.choices.includes('glb')) chosen.add('glb'); // the 3D player needs it
      const boxes = field.choices.map((choice) => {
        const box = Object.assign(document.createElement('input'), { type: 'checkbox', value: choice, checked: chosen.has(choice) });
        box.dataset.option = field.name;
        const span = document.createElement('span');
        span.append(box, ` ${choice} `);
        label.append(span);
        return box;
      });
      readers.push(() => [field.name, boxes.filter((b) => b.checked).map((b) => b.value)]);
    } else if (field.choices) {
      const select = document.createElement('select');
      select.name = field.name;
      if (field.nullable) select.add(new Option('(default)', '', false, field.default === null));
      for (const choice of field.choices) select.add(new Option(String(choice), String(choice), false, choice === field.default));
      label.append(select);
      const numeric = field.type === 'integer' || field.type === 'number';
      readers.push(() => [field.name, select.value === '' && field.nullable ? null : numeric ? Number(select.value) : select.value]);
    } else if (field.type === 'boolean') {
      const box = Object.assign(document.createElement('input'), { type: 'checkbox', name: field.name, checked: !!field.default });
      label.append(box);
      readers.push(() => [field.name, box.checked]);
    } else {
      const numeric = field.type === 'integer' || field.type === 'number';
      const input = Object.assign(document.createElement('input'), { name: field.name, type: numeric ? 'number' : 'text', size: 8 });
      if (field.default !== null && field.default !== undefined) input.value = field.default;
      if (numeric) {
        if (field.minimum !== null) input.min = field.minimum;
        if (field.maximum !== null && field.maximum < 1e15) input.max = field.maximum;
        input.step = field.type === 'integer' ? '1' : 'any';
      }
      if (field.nullable) input.placeholder = 'unset';
      label.append(input);
      readers.push(() => {
        if (input.value === '' && field.nullable) return [field.name, null]; // unset: the option's own default
        return [field.name, numeric ? Number(input.value) : input.value];
      });
    }
    container.append(label);
  }
  return () => Object.fromEntries(readers.map((read) => read()));
}

async function sha256Hex(file) {
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Upload one song; big files and secure pages go straight to storage through a presigned PUT. */
async function uploadOne(file, key, onProgress) {
  if (window.crypto?.subtle) {
    const sha256 = await sha256Hex(file);
    const ticket = await api('POST', '/v1/tracks/uploads', { json: { filename: file.name, sha256, size_bytes: file.size } });
    // The ticket's headers are signed; the browser sets Content-Length itself (the file's, as signed).
    const headers = Object.fromEntries(Object.entries(ticket.headers).filter(([name]) => name.toLowerCase() !== 'content-length'));
    const put = await sendWithProgress('PUT', ticket.url, file, { headers, onProgress });
    if (put.status >= 300) throw xhrError(put.status, put.text);
    return api('POST', new URL(ticket.complete_url).pathname);
  }
  // Without WebCrypto (a plain-http page on another host) the song streams through the API instead.
  const form = new FormData();
  form.append('file', file, file.name);
  const answer = await sendWithProgress('POST', '/v1/tracks', form, { headers: { Authorization: `Bearer ${key}` }, onProgress });
  if (answer.status !== 201) throw xhrError(answer.status, answer.text);
  return JSON.parse(answer.text);
}

/** One file's row in the upload list: its name, a progress bar while it uploads, what happened. */
class FileRow {
  constructor(list, file) {
    this.state = el('span', { className: 'file-state', textContent: 'Waiting' });
    this.bar = el('progress', { max: 1, value: 0 });
    this.msg = el('span', { className: 'msg', textContent: 'Waiting for the songs before it.' });
    this.li = el('li', { className: 'waiting' },
      el('span', { className: 'file-name', textContent: `${file.name} (${(file.size / 1e6).toFixed(1)} MB)` }),
      this.state, this.bar, this.msg);
    list.prepend(this.li);
  }

  show(state, label, message) {
    this.li.className = state;
    this.state.textContent = label;
    this.msg.textContent = sentence(message);
  }

  /** Refused: no progress bar (nothing was kept), the reason in words. */
  refuse(reason) {
    this.bar.remove();
    this.show('refused', 'Refused', reason);
  }
}

/**
 * Upload the dropped songs one after another, then render all that arrived as one album named
 * `name`. Refused files say why in their row; the others go on. `audioExtensions` are the song
 * formats the service accepts (GET /v1/options).
 */
export async function uploadAndRender(files, { name, list, readOptions, audioExtensions, key, onSubmitted }) {
  const tracks = [];
  for (const file of files) {
    const view = new FileRow(list, file);
    const ext = file.name.includes('.') ? file.name.split('.').pop().toLowerCase() : '';
    if (!audioExtensions.includes(ext)) {
      view.refuse(`${ext ? `.${ext}` : 'A name without an extension'} is not a song format this service reads (it reads ${audioExtensions.join(', ')})`);
      continue;
    }
    try {
      view.show('uploading', 'Uploading', 'Sending the song to storage');
      const track = await uploadOne(file, key, (share) => { view.bar.value = share; });
      view.bar.value = 1;
      view.show('uploaded', 'Uploaded', 'Uploaded; the album is rendered once every song is in');
      tracks.push({ track, view });
    } catch (err) {
      view.refuse(err instanceof ApiError ? err.message : plainWords(0));
    }
  }
  if (!tracks.length) return null;
  try {
    const body = { tracks: tracks.map((t) => t.track.sha256), options: readOptions(), name };
    const submitted = await api('POST', '/v1/jobs', { json: body });
    const album = submitted.batch.name ? `the album “${submitted.batch.name}”` : 'an album without a name';
    for (const { view } of tracks) {
      view.li.dataset.batch = submitted.batch.id;
      view.show('rendering', 'Rendering', `Uploaded; rendering in ${album}, listed below`);
    }
    onSubmitted?.(submitted);
    return submitted;
  } catch (err) {
    for (const { view } of tracks) view.show('refused', 'Not rendered', `Uploaded, but the render was refused: ${err.message}`);
    return null;
  }
}
