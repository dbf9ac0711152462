// The team's jobs, grouped by batch (album), kept live by polling that backs off when nothing
// moves and when the server is down. Each job: its state in plain words, progress, the reason it
// failed, and what can be done with it (play, cancel, delete, render again, publish).
import { api } from './api.js';

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

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function button(text, onClick, title = '') {
  return el('button', { type: 'button', textContent: text, title, onclick: onClick });
}

export function stateWords(job) {
  const words = STATE_WORDS[job.state] ?? job.state;
  return ACTIVE.has(job.state) && job.state !== 'queued' ? `${words} (${Math.round(job.progress * 100)} %)` : words;
}

export class JobBoard {
  /**
   * @param {HTMLElement} container where the list goes
   * @param {object} hooks onPlay(job), onError(message), onStatus(text), styleChoices()
   */
  constructor(container, hooks) {
    this.container = container;
    this.hooks = hooks;
    this.jobs = [];
    this.delayMs = 1000;
    this.timer = null;
    this.openForms = new Map(); // job id -> the form a person is filling in, kept across refreshes
  }

  start() { this.stop(); this.refresh(); }

  stop() { clearTimeout(this.timer); this.timer = null; }

  /** Fetch the list now, draw it, and plan the next poll: 1 s while jobs run, backing off to 15 s. */
  async refresh() {
    clearTimeout(this.timer);
    let failed = false;
    try {
      const answer = await api('GET', '/v1/jobs?limit=100');
      const changed = JSON.stringify(answer.items) !== JSON.stringify(this.jobs);
      this.jobs = answer.items;
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

  async act(method, path, body) {
    try {
      const answer = await api(method, path, body === undefined ? {} : { json: body });
      this.delayMs = 1000;
      await this.refresh();
      return answer;
    } catch (err) {
      this.hooks.onError?.(err.message, err);
      return null;
    }
  }

  draw() {
    if (!this.jobs.length) {
      this.container.replaceChildren(el('p', { textContent: 'No jobs yet. Upload songs above to render their dances.' }));
      return;
    }
    const batches = new Map();
    for (const job of this.jobs) {
      const id = job.batch_id ?? 'single';
      if (!batches.has(id)) batches.set(id, []);
      batches.get(id).push(job);
    }
    const blocks = [];
    for (const [id, jobs] of batches) {
      const done = jobs.filter((j) => !ACTIVE.has(j.state)).length;
      const progress = jobs.reduce((sum, j) => sum + (ACTIVE.has(j.state) ? j.progress : 1), 0) / jobs.length;
      const head = el('header', {
        textContent: `Batch ${id.slice(0, 12)}…: ${jobs.length} song${jobs.length > 1 ? 's' : ''}, ${done} finished, ${Math.round(progress * 100)} %`,
      });
      const table = el('table');
      for (const job of jobs) table.append(this.jobRow(job));
      blocks.push(el('div', { className: 'batch' }, head, table));
    }
    this.container.replaceChildren(...blocks);
  }

  jobRow(job) {
    const state = el('td', { className: `state state-${job.state}` }, stateWords(job));
    if (ACTIVE.has(job.state)) state.append(el('progress', { max: 1, value: job.progress }));
    if (job.error_message) state.append(el('div', { className: 'why', textContent: job.error_message }));
    const o = job.options;
    const what = el('td', {}, el('strong', { textContent: job.track_name }),
      el('div', { className: 'muted', textContent: `${o.style} · seed ${o.seed} · ${o.fps} fps · ${o.formats.join(', ')} · ${o.rig}` }));
    const actions = el('td', { className: 'actions' });
    if (job.state === 'done') {
      const play = button('Play', () => this.hooks.onPlay(job));
      play.dataset.job = job.id;
      if (!job.artifacts.includes('glb')) { play.disabled = true; play.title = 'rendered without glb: render again with glb to play it in 3D'; }
      actions.append(play, button('Render again', () => this.toggleForm(job, 'rerender')), button('Publish', () => this.toggleForm(job, 'publish')));
    }
    if (ACTIVE.has(job.state)) actions.append(button('Cancel', () => this.act('POST', `/v1/jobs/${job.id}/cancel`)));
    actions.append(button('Delete', () => {
      if (confirm(`Delete the job of ${job.track_name} and its files?`)) this.act('DELETE', `/v1/jobs/${job.id}`);
    }));
    const form = this.openForms.get(job.id);
    if (form) actions.append(form);
    return el('tr', { id: `job-${job.id}` }, what, state, actions);
  }

  toggleForm(job, kind) {
    const open = this.openForms.get(job.id);
    this.openForms.delete(job.id);
    if (!open || open.dataset.kind !== kind) this.openForms.set(job.id, kind === 'publish' ? this.publishForm(job) : this.rerenderForm(job));
    this.draw();
  }

  rerenderForm(job) {
    const seed = el('input', { type: 'number', min: 0, step: 1, value: job.options.seed + 1, size: 6 });
    const style = el('select');
    for (const choice of this.hooks.styleChoices()) style.add(new Option(choice, choice, false, choice === job.options.style));
    const form = el('form', {}, el('label', {}, 'seed ', seed), ' ', el('label', {}, 'style ', style), ' ', el('button', { type: 'submit', textContent: 'Render' }));
    form.dataset.kind = 'rerender';
    form.onsubmit = async (event) => {
      event.preventDefault();
      const options = { ...job.options, seed: Number(seed.value), style: style.value };
      this.openForms.delete(job.id);
      await this.act('POST', '/v1/jobs', { tracks: [job.track_sha256], options });
    };
    return form;
  }

  publishForm(job) {
    const title = el('input', { value: job.track_name.replace(/\.[^.]+$/, ''), size: 20, required: true });
    const tags = el('input', { placeholder: 'warm-up, cardio', size: 16 });
    const note = el('span');
    const form = el('form', {}, el('label', {}, 'title ', title), ' ', el('label', {}, 'tags ', tags), ' ', el('button', { type: 'submit', textContent: 'Publish' }), ' ', note);
    form.dataset.kind = 'publish';
    form.onsubmit = async (event) => {
      event.preventDefault();
      const body = { job_id: job.id, title: title.value, tags: tags.value.split(',').map((t) => t.trim()).filter(Boolean) };
      try {
        const routine = await api('POST', '/v1/routines', { json: body });
        note.textContent = `Published as ${routine.id} (${routine.intensity_level} intensity).`;
      } catch (err) {
        note.textContent = err.message;
        note.className = 'error';
      }
    };
    return form;
  }
}
