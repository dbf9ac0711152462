// Libraries: a team's own dance styles. Upload a folder of motion files (each subfolder one style), watch
// the build, see each style's minutes, phrases, tempo range and a contact sheet of its phrases, then render
// an album in it. Every refused file says why in its row; nothing here needs a reload.
import { api, ApiError, session, sendWithProgress, xhrError } from './api.js';

const POLL_MS = 2000;

async function sha256Hex(file) {
  const digest = await crypto.subtle.digest('SHA-256', await file.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The file's path inside the chosen folder, and the style it dances: the subfolder it is in, or the
 * chosen folder's own name for files directly in it (one style per folder), or `fallbackStyle`. */
function placed(file, fallbackStyle) {
  const parts = (file.webkitRelativePath || file.name).split('/');
  const folder = parts.length > 2 ? parts[1] : parts.length === 2 ? parts[0] : fallbackStyle;
  const style = folder.toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40);
  return { filename: parts.length > 1 ? parts.slice(1).join('/') : file.name, style: style || 'team' };
}

/** GET a binary resource with the key, as an object URL an <img> can show (an img sends no bearer). */
async function imageUrl(path) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${session.key}` } });
  if (!response.ok) throw new ApiError(response.status, 'http_error', `the server answered ${response.status}`);
  return URL.createObjectURL(await response.blob());
}

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** A library's card: its state, its styles with their sheets, its files, and the album button. */
function card(library, { onUse }) {
  const box = el('article', { className: 'library', id: `library-${library.id}` });
  box.dataset.state = library.state;
  box.append(el('h3', {}, `${library.name} `, el('small', {}, library.state)));
  if (library.state === 'failed') box.append(el('p', { className: 'error' }, `The build failed: ${library.error_message}`));
  if (library.state === 'ready') {
    const styles = el('div', { className: 'styles' });
    for (const [name, style] of Object.entries(library.styles)) {
      const [low, high] = style.tempo_bpm ?? [null, null];
      const tempo = low === null ? 'no tempo fits' : `fits ${low}-${high} BPM`;
      const fills = style.fills_without_stalls ? 'fills a 4-minute song' : 'too little for a 4-minute song without stalls';
      const figure = el('figure', { className: 'style' });
      figure.dataset.style = name;
      figure.append(el('figcaption', {}, `${name}: ${style.minutes} min, ${style.phrases} phrases, ${tempo}; ${fills}`));
      const img = el('img', { alt: `contact sheet of ${name}`, width: 640 });
      imageUrl(`/v1/libraries/${library.id}/sheets/${name}`).then((url) => { img.src = url; }).catch((err) => {
        figure.append(el('p', { className: 'error' }, `The contact sheet cannot be shown: ${err.message}`));
      });
      figure.append(img);
      styles.append(figure);
    }
    const use = el('button', { type: 'button', className: 'use-library' }, 'Render an album in this library');
    use.onclick = () => onUse(library);
    box.append(styles, use, el('p', { className: 'credits' }, `Credits: ${library.credits.join('; ')}`));
  }
  const files = el('ul', { className: 'library-files' });
  for (const file of library.files) {
    const li = el('li', {}, `${file.filename} (${file.style}): ${file.status}`);
    li.dataset.status = file.status;
    if (file.reason) li.append(` (${file.reason})`);
    if (file.status === 'refused') li.classList.add('error');
    files.append(li);
  }
  box.append(el('details', {}, el('summary', {}, `${library.files.length} files`), files));
  return box;
}

export class LibraryView {
  /**
   * `root` holds the form (#library-form: name, credit, licence, folder input) and the list (#library-list).
   * `motionExtensions` come from GET /v1/options; `onUse(library)` sets the render options to the library.
   */
  constructor(root, { motionExtensions, onUse, onError }) {
    this.root = root;
    this.extensions = motionExtensions;
    this.onUse = onUse;
    this.onError = onError;
    this.list = root.querySelector('#library-list');
    this.progress = root.querySelector('#library-progress');
    this.polling = new Set();
    root.querySelector('#library-folder').addEventListener('change', (event) => {
      const files = [...event.target.files];
      event.target.value = '';
      this.upload(files);
    });
  }

  async refresh() {
    try {
      const { items } = await api('GET', '/v1/libraries');
      this.list.replaceChildren(...items.map((library) => card(library, { onUse: this.onUse })));
      for (const library of items) if (['queued', 'building', 'uploading'].includes(library.state)) this.watch(library.id);
    } catch (err) {
      this.onError(`The libraries cannot be listed: ${err.message}`, err);
    }
  }

  /** Poll a library until it is built or failed; `note` goes into the last message (files left out). */
  watch(id, note = '') {
    if (this.polling.has(id)) return;
    this.polling.add(id);
    const tick = async () => {
      try {
        const library = await api('GET', `/v1/libraries/${id}`);
        const shown = this.list.querySelector(`#library-${id}`);
        const fresh = card(library, { onUse: this.onUse });
        if (shown) shown.replaceWith(fresh); else this.list.prepend(fresh);
        if (library.state === 'ready' || library.state === 'failed') {
          this.polling.delete(id);
          this.say(library.state === 'ready' ? `${library.name} is built${note}.` : `${library.name} failed: ${library.error_message}${note}`, library.state === 'failed');
          return;
        }
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) { this.polling.delete(id); return; }
        this.onError(`Watching the build: ${err.message}`, err);
      }
      setTimeout(tick, POLL_MS);
    };
    tick();
  }

  say(text, error = false) {
    this.progress.textContent = text;
    this.progress.classList.toggle('error', error);
  }

  /** Declare the folder's motion files, PUT each to its presigned URL, start the build and watch it. */
  async upload(files) {
    const form = this.root.querySelector('#library-form');
    const name = form.elements.name.value.trim() || 'team library';
    const credit = form.elements.credit.value.trim();
    const licence = form.elements.licence.value.trim();
    const fallback = form.elements.style.value.trim() || 'team';
    const motion = files.filter((f) => this.extensions.includes(f.name.split('.').pop().toLowerCase()));
    const skipped = files.length - motion.length;
    if (!motion.length) {
      this.say(`No motion files there: the service reads ${this.extensions.map((e) => `.${e}`).join(', ')}.`, true);
      return;
    }
    try {
      this.say(`Reading ${motion.length} files…`);
      const declared = [];
      for (const file of motion) {
        declared.push({ ...placed(file, fallback), sha256: await sha256Hex(file), size_bytes: file.size, credit, licence });
      }
      const created = await api('POST', '/v1/libraries', { json: { name, files: declared } });
      let sent = 0;
      for (const [i, ticket] of created.uploads.entries()) {
        const headers = Object.fromEntries(Object.entries(ticket.headers).filter(([h]) => h.toLowerCase() !== 'content-length'));
        const put = await sendWithProgress('PUT', ticket.url, motion[i], {
          headers,
          onProgress: (share) => this.say(`Uploading ${ticket.filename} (${i + 1} of ${motion.length}, ${Math.round(100 * share)} %)`),
        });
        if (put.status >= 300) throw xhrError(put.status, put.text);
        sent += 1;
      }
      await api('POST', new URL(created.build_url).pathname);
      const leftOut = skipped ? ` (${skipped} not motion files, left out)` : '';
      this.say(`Uploaded ${sent} files${leftOut}; building ${name}…`);
      this.watch(created.library.id, leftOut);
    } catch (err) {
      this.say(`The library could not be uploaded: ${err.message}`, true);
    }
  }
}
