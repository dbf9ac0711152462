// The team's albums, kept live by polling that backs off when nothing moves and when the server is
// down. An album is an upload (a batch): its name, its progress, its songs in upload order, and
// under each song its takes (the song rendered again with another style or seed). Each take: the
// style and tempo it was danced in (what "auto" chose), its state in plain words, the reason it
// failed, whether it is published, and what can be done with it (play, render again, publish,
// cancel, delete). An album is downloaded as one archive and published as a whole.
import { api, sentence } from './api.js';
import { button, el } from './dom.js';
import { publishAlbumForm, publishForm, rerenderForm } from './forms.js';

const STATE_WORDS = {
  queued: 'Waiting in the queue',
  decoding: 'Listening to the song',
  generating: 'Dancing',
  exporting: 'Writing the files',
  done: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};
const ACTIVE = new Set(['queued', 'decoding', 'generating', 'exporting']);

export function stateWords(job) {
  const words = STATE_WORDS[job.state] ?? job.state;
  return ACTIVE.has(job.state) && job.state !== 'queued' ? `${words} (${Math.round(job.progress * 100)} %)` : words;
}

/** The style a job was danced in, saying when "auto" chose it; and its tempo once known. */
export function styleWords(job) {
  const asked = job.options.style;
  const danced = job.summary?.style;
  if (asked === 'auto' && danced) return `${danced} (auto chose it)`;
  if (asked === 'auto') return ACTIVE.has(job.state) ? 'auto (chosen as it renders)' : 'auto';
  return danced && danced !== asked ? `${danced} (asked for ${asked})` : asked;
}

export function tempoWords(job) {
  return job.summary ? `${Math.round(job.summary.tempo_bpm)} BPM` : '';
}

function when(seconds) {
  return new Date(seconds * 1000).toLocaleString(undefined, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' });
}

export class JobBoard {
  /**
   * @param {HTMLElement} container where the albums go
   * @param {object} hooks onPlay(job), onError(message, err), onRecovered(), onStatus(text),
   *   onPublished(), styleChoices(), playingId() (the job in the player)
   */
  constructor(container, hooks) {
    this.container = container;
    this.hooks = hooks;
    this.jobs = [];
    this.batches = [];
    this.delayMs = 1000;
    this.timer = null;
    this.openForms = new Map(); // job or album id -> the form a person is filling in, kept across refreshes
    this.notes = new Map(); // job or album id -> {text, kind}: what the last action there did
  }

  start() { this.stop(); this.refresh(); }

  stop() { clearTimeout(this.timer); this.timer = null; }

  /** Fetch the albums and jobs now, draw them, and plan the next poll: 1 s while jobs run, backing off to 15 s. */
  async refresh() {
    clearTimeout(this.timer);
    let failed = false;
    try {
      const [batches, jobs] = await Promise.all([api('GET', '/v1/batches?limit=50'), api('GET', '/v1/jobs?limit=200')]);
      const changed = JSON.stringify([batches.items, jobs.items]) !== JSON.stringify([this.batches, this.jobs]);
      this.batches = batches.items;
      this.jobs = jobs.items;
      if (changed) this.draw();
      const running = this.jobs.some((j) => ACTIVE.has(j.state));
      this.delayMs = running ? 1000 : changed ? 2000 : Math.min(15000, this.delayMs * 2);
      this.hooks.onStatus?.(running ? 'updating every second' : '');
    } catch (err) {
      failed = true;
      this.delayMs = Math.min(30000, Math.max(2000, this.delayMs * 2));
      this.hooks.onError?.(`${err.message} Retrying in ${Math.round(this.delayMs / 1000)} s.`, err);
      if (err.status === 401) return; // signed out by the page; nothing to poll
    }
    if (!failed) this.hooks.onRecovered?.();
    this.timer = setTimeout(() => this.refresh(), this.delayMs);
  }

  /** Send a request for a row or an album; its answer (or the refusal, in words) becomes the note at `where`. */
  async act(where, method, path, body, describe = () => '') {
    try {
      const answer = await api(method, path, body === undefined ? {} : { json: body });
      this.note(where, describe(answer), 'ok');
      this.delayMs = 1000;
      await this.refresh();
      return answer;
    } catch (err) {
      this.note(where, err.message, 'error');
      if (err.status === 401) this.hooks.onError?.(err.message, err);
      return null;
    }
  }

  note(where, text, kind = 'ok') {
    if (text) this.notes.set(where, { text: sentence(text), kind }); else this.notes.delete(where);
    this.draw();
  }

  /** The albums to show: the team's batches, then jobs of batches not listed, then takes without their song. */
  albums() {
    const byId = new Map(this.jobs.map((j) => [j.id, j]));
    const takesOf = new Map();
    for (const job of this.jobs) {
      if (!job.rerender_of) continue;
      if (!takesOf.has(job.rerender_of)) takesOf.set(job.rerender_of, []);
      takesOf.get(job.rerender_of).push(job);
    }
    const shown = new Set();
    const albums = [];
    const song = (job) => {
      shown.add(job.id);
      const takes = (takesOf.get(job.id) ?? []).sort((a, b) => a.created_at - b.created_at);
      for (const take of takes) shown.add(take.id);
      return { job, takes };
    };
    for (const batch of this.batches) {
      const songs = batch.job_ids.map((id) => byId.get(id)).filter(Boolean).map(song);
      if (songs.length) albums.push({ id: batch.id, name: batch.name, created_at: batch.created_at, songs });
    }
    const unlisted = new Map();
    for (const job of this.jobs) {
      if (shown.has(job.id) || (job.rerender_of && byId.has(job.rerender_of))) continue;
      const key = job.batch_id ?? 'loose';
      if (!unlisted.has(key)) unlisted.set(key, { id: job.batch_id, name: '', created_at: job.created_at, songs: [] });
      unlisted.get(key).songs.push(song(job));
    }
    return [...albums, ...unlisted.values()];
  }

  /** Draw the albums again; not while a person types in one of their forms (it would lose the focus). */
  draw() {
    const typing = document.activeElement?.matches?.('input, select, textarea') && this.container.contains(document.activeElement);
    if (typing) {
      if (!this.drawAfterTyping) {
        this.drawAfterTyping = true;
        this.container.addEventListener('focusout', () => { this.drawAfterTyping = false; setTimeout(() => this.draw(), 0); }, { once: true });
      }
      return;
    }
    if (!this.jobs.length) {
      this.container.replaceChildren(el('p', { textContent: 'No albums yet. Upload songs above to render their dances.' }));
      return;
    }
    this.container.replaceChildren(...this.albums().map((album) => this.albumBlock(album)));
  }

  albumBlock(album) {
    const all = album.songs.flatMap((s) => [s.job, ...s.takes]);
    const firsts = album.songs.map((s) => s.job);
    const done = firsts.filter((j) => j.state === 'done').length;
    const failed = firsts.filter((j) => j.state === 'failed').length;
    const progress = firsts.reduce((sum, j) => sum + (ACTIVE.has(j.state) ? j.progress : 1), 0) / firsts.length;
    const title = album.name || (album.id ? `Upload of ${when(album.created_at)}` : 'Other jobs');
    const facts = [`${firsts.length} song${firsts.length > 1 ? 's' : ''}`, `${done} done`];
    if (failed) facts.push(`${failed} failed`);
    if (firsts.some((j) => ACTIVE.has(j.state))) facts.push(`${Math.round(progress * 100)} %`);
    const head = el('header', { className: 'album-head' },
      el('h3', { textContent: title }),
      el('span', { className: 'muted', textContent: facts.join(' · ') }));
    if (album.id) head.append(this.albumActions(album, all));
    const block = el('section', { className: 'album' }, head);
    block.dataset.batch = album.id ?? '';
    const form = this.openForms.get(album.id);
    if (form) block.append(form);
    const note = this.notes.get(album.id);
    if (note) block.append(el('p', { className: `note ${note.kind}`, textContent: note.text }));
    for (const { job, takes } of album.songs) {
      const songBlock = el('div', { className: 'song' }, this.takeRow(job, 1));
      takes.forEach((take, i) => songBlock.append(this.takeRow(take, i + 2)));
      block.append(songBlock);
    }
    return block;
  }

  albumActions(album, all) {
    const finished = all.some((j) => j.state === 'done');
    const takesOf = (song) => [song.job, ...song.takes];
    const unpublished = album.songs.filter((song) => takesOf(song).some((j) => j.state === 'done') && !takesOf(song).some((j) => j.published));
    const download = button('Download all files (.zip)', () => this.downloadAlbum(album), { disabled: !finished, className: 'download-album' });
    const publish = button('Publish the album…', () => this.toggleForm(album.id, 'publish-album', () => publishAlbumForm(this, album)), {
      disabled: !unpublished.length, className: 'publish-album',
    });
    const actions = el('div', { className: 'actions' }, download, publish);
    let why = '';
    if (!finished) why = 'Nothing to download or publish yet: no song has finished rendering.';
    else if (!unpublished.length) why = 'Every finished song of this album is published.';
    if (why) actions.append(el('span', { className: 'why-not', textContent: why }));
    return actions;
  }

  async downloadAlbum(album) {
    try {
      const ticket = await api('POST', `/v1/batches/${album.id}/archive-ticket`);
      const link = el('a', { href: ticket.url, download: '' });
      document.body.append(link);
      link.click();
      link.remove();
      this.note(album.id, 'The archive of every file is downloading; it is written as it is read, so it starts at once', 'ok');
    } catch (err) {
      this.note(album.id, err.message, 'error');
    }
  }

  takeRow(job, take) {
    const playing = this.hooks.playingId?.() === job.id;
    const o = job.options;
    const name = el('strong', { textContent: job.track_name });
    const label = take > 1 ? el('span', { className: 'badge', textContent: `take ${take}` }) : null;
    const facts = [styleWords(job), tempoWords(job), `seed ${o.seed}`, `${o.fps} fps`, o.formats.join(', ')].filter(Boolean);
    const what = el('div', { className: 'what' }, name, ' ', label,
      playing ? el('span', { className: 'badge playing-badge', textContent: 'in the player' }) : null,
      el('div', { className: 'muted facts', textContent: facts.join(' · ') }));
    const state = el('div', { className: `state state-${job.state}` }, stateWords(job));
    if (ACTIVE.has(job.state)) state.append(el('progress', { max: 1, value: job.progress }));
    if (job.published) state.append(el('div', { className: 'published', textContent: `Published as “${job.published.title}”` }));
    const actions = el('div', { className: 'actions' });
    const reasons = [];
    if (job.state === 'done') {
      const play = button('Play', () => this.hooks.onPlay(job));
      play.dataset.job = job.id;
      if (!job.artifacts.includes('glb')) {
        play.disabled = true;
        reasons.push('Play needs the 3D file: this take was rendered without glb, so render it again (glb is added).');
      }
      actions.append(play, button('Render again', () => this.toggleForm(job.id, 'rerender', () => rerenderForm(this, job))));
      if (!job.published) actions.append(button('Publish', () => this.toggleForm(job.id, 'publish', () => publishForm(this, job))));
    }
    if (ACTIVE.has(job.state)) actions.append(button('Cancel', () => this.act(job.id, 'POST', `/v1/jobs/${job.id}/cancel`, undefined, () => 'Cancelled')));
    actions.append(button('Delete', () => {
      if (confirm(`Delete ${take > 1 ? `take ${take} of ` : 'the job of '}${job.track_name} and its files?`)) this.act(job.id, 'DELETE', `/v1/jobs/${job.id}`);
    }));
    const row = el('div', { className: `take${playing ? ' playing' : ''}`, id: `job-${job.id}` }, what, state, actions);
    if (playing) row.setAttribute('aria-current', 'true');
    if (job.error_message) row.append(el('p', { className: 'why', textContent: sentence(job.error_message) }));
    for (const reason of reasons) row.append(el('p', { className: 'why-not', textContent: reason }));
    const form = this.openForms.get(job.id);
    if (form) row.append(form);
    const note = this.notes.get(job.id);
    if (note) row.append(el('p', { className: `note ${note.kind}`, textContent: note.text }));
    return row;
  }

  /** Open the form of `kind` at `where` (made by `make`), or close it when it is the one open. */
  toggleForm(where, kind, make) {
    const open = this.openForms.get(where);
    this.openForms.delete(where);
    if (!open || open.dataset.kind !== kind) {
      const form = make();
      form.dataset.kind = kind;
      this.openForms.set(where, form);
    }
    this.draw();
  }

  closeForm(where) {
    const form = this.openForms.get(where);
    if (form?.contains(document.activeElement)) document.activeElement.blur(); // the board may draw again
    this.openForms.delete(where);
  }
}
