// Choreo Studio: sign in with an API key, then what the key's scopes allow (GET /v1/me says):
// upload an album and render it, the live albums, the 3D player, publishing, and the routine browser.
// Every failure ends up as words in the banner or next to what failed, never as a blank page.
import { api, session } from './api.js';
import { JobBoard, styleWords, tempoWords } from './jobs.js';
import { LibraryView } from './libraries.js';
import { Player } from './player.js';
import { downloadList, setUpRoutines } from './routines.js';
import { Timeline } from './timeline.js';
import { CueSheet } from './cues.js';
import { buildOptionsForm, offeredChoices, uploadAndRender } from './upload.js';

const $ = (id) => document.getElementById(id);
const banner = $('banner');
let optionFields = [];
let audioExtensions = [];
let motionExtensions = [];
let libraries = null;
let readOptions = () => ({});
let board = null;
let player = null;
let timeline = null;
let cueSheet = null;
let playing = null; // the job in the player
let findRoutines = () => {};

function showBanner(message) {
  banner.textContent = message;
  banner.hidden = false;
}
function clearBanner() { banner.hidden = true; }

window.addEventListener('error', (event) => showBanner(`Something went wrong on this page: ${event.message}`));
window.addEventListener('unhandledrejection', (event) => showBanner(`Something went wrong on this page: ${event.reason?.message ?? event.reason}`));

/** The styles a person may pick: the options' choices without the deprecated ones. */
function styleChoices() {
  const field = optionFields.find((f) => f.name === 'style');
  return field ? offeredChoices(field) : ['auto'];
}

function onApiError(message, err) {
  if (err?.status === 401) { signOut(message); return; }
  showBanner(message);
}

function signOut(message = '') {
  session.key = null;
  board?.stop();
  audio().pause();
  for (const id of ['upload', 'libraries', 'jobs', 'player-section', 'routines', 'who']) $(id).hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message;
}

const audio = () => $('audio');

async function signIn(key) {
  let me;
  try {
    me = await api('GET', '/v1/me', { key });
  } catch (err) {
    if (err.status === 401) { signOut(err.message); return; }
    showBanner(`${err.message} Signing in again in 5 s.`);
    setTimeout(() => signIn(key), 5000);
    return;
  }
  clearBanner();
  session.key = key;
  $('signin').hidden = true;
  $('who').hidden = false;
  $('who-text').textContent = `${me.name} · team ${me.team} · scopes: ${me.scopes.join(', ')}`;
  $('upload').hidden = !me.can.upload;
  $('libraries').hidden = !me.can.upload;
  if (me.can.upload) {
    libraries ??= new LibraryView($('libraries'), { motionExtensions, onUse: renderIn, onError: onApiError });
    libraries.refresh();
  }
  $('jobs').hidden = !me.can.watch_jobs;
  $('routines').hidden = !me.can.browse_routines;
  if (me.can.watch_jobs) {
    board = new JobBoard($('jobs-list'), {
      onPlay: play,
      onError: onApiError,
      onRecovered: clearBanner,
      onStatus: (text) => { $('jobs-status').textContent = text; },
      onPublished: () => findRoutines(),
      playingId: () => playing?.id ?? null,
      styleChoices,
    });
    board.start();
  }
  if (me.can.browse_routines) {
    const onPlay = me.can.watch_jobs ? playRoutine : null;
    findRoutines = setUpRoutines($('routine-filters'), $('routine-list'), { styleChoices, onError: onApiError, onPlay });
    findRoutines();
  }
}

async function playRoutine(routine) {
  try {
    await play(await api('GET', `/v1/jobs/${routine.job_id}`), `routine “${routine.title}”`);
  } catch (err) {
    onApiError(`The routine “${routine.title}” cannot be played: ${err.message}`, err);
  }
}

async function loadOptions() {
  try {
    const options = await api('GET', '/v1/options', { key: null });
    optionFields = options.fields;
    audioExtensions = options.audio_extensions;
    motionExtensions = options.motion_extensions;
    readOptions = buildOptionsForm($('options-fields'), optionFields);
  } catch (err) {
    $('options-fields').textContent = `The render options could not be loaded: ${err.message}`;
  }
}

/** Render the next songs in a team library: its styles in the style choice, its id in the options. */
function renderIn(library) {
  const fields = optionFields.map((f) => {
    if (f.name === 'style') return { ...f, choices: ['auto', ...Object.keys(library.styles)], default: 'auto', notes: {} };
    if (f.name === 'library') return { ...f, default: library.id };
    return f;
  });
  readOptions = buildOptionsForm($('options-fields'), fields);
  $('library-note').hidden = false;
  $('library-note').querySelector('span').textContent = `Songs dropped now are danced in the library ${library.name} (${Object.keys(library.styles).join(', ')}).`;
  $('upload').scrollIntoView({ behavior: 'smooth' });
}

/** Every file in a dropped folder (a FileSystemDirectoryEntry), however deep. */
async function filesIn(directory) {
  const reader = directory.createReader();
  const entries = [];
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) break;
    entries.push(...batch);
  }
  const files = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.isDirectory) files.push(...await filesIn(entry));
    else files.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
  }
  return files;
}

function setUpUpload() {
  $('library-clear').onclick = () => {
    readOptions = buildOptionsForm($('options-fields'), optionFields);
    $('library-note').hidden = true;
  };
  const drop = $('drop');
  const nameInput = $('album-name');
  /** Upload `files` as one album: named as typed, else after the folder they came from. */
  const send = (files, folder = '') => {
    if (!files.length) return;
    if (!nameInput.value.trim() && folder) nameInput.value = folder;
    const name = nameInput.value.trim();
    nameInput.value = '';
    uploadAndRender([...files], { name, list: $('upload-list'), readOptions, audioExtensions, key: session.key, onSubmitted: () => board?.start() });
  };
  drop.addEventListener('dragover', (event) => { event.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (event) => {
    event.preventDefault();
    drop.classList.remove('over');
    const entries = [...event.dataTransfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
    const folder = entries.find((entry) => entry.isDirectory);
    if (!folder) { send(event.dataTransfer.files); return; }
    const files = [];
    for (const entry of entries) {
      if (entry.isDirectory) files.push(...await filesIn(entry));
      else files.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    }
    send(files, folder.name);
  });
  $('file-input').addEventListener('change', (event) => { send(event.target.files); event.target.value = ''; });
  $('folder-input').addEventListener('change', (event) => {
    const files = [...event.target.files].sort((a, b) => a.webkitRelativePath.localeCompare(b.webkitRelativePath));
    send(files, files[0]?.webkitRelativePath.split('/')[0] ?? '');
    event.target.value = '';
  });
}

function clock(t) {
  const m = Math.floor(t / 60);
  return `${m}:${(t - 60 * m).toFixed(1).padStart(4, '0')}`;
}

function setUpPlayer() {
  const a = audio();
  cueSheet = new CueSheet($('cue-sheet'), $('count-in'));
  $('play').onclick = () => {
    if (cueSheet.countingIn) { cueSheet.cancelCountIn(); return; }
    if (a.paused) cueSheet.start(a); else a.pause();
  };
  a.addEventListener('play', () => { $('play').textContent = 'Pause'; });
  a.addEventListener('pause', () => { $('play').textContent = 'Play'; });
  for (const b of document.querySelectorAll('[data-view]')) {
    b.onclick = () => {
      player?.setView(b.dataset.view);
      for (const other of document.querySelectorAll('[data-view]')) other.setAttribute('aria-pressed', String(other === b));
    };
  }
  $('zoom-in').onclick = () => timeline?.zoom(0.5);
  $('zoom-out').onclick = () => timeline?.zoom(2);
  $('zoom-all').onclick = () => timeline?.showAll();
  for (const b of document.querySelectorAll('[data-rate]')) {
    b.onclick = () => {
      a.playbackRate = Number(b.dataset.rate);
      for (const other of document.querySelectorAll('[data-rate]')) other.setAttribute('aria-pressed', String(other === b));
    };
  }
  $('loop-bar').onclick = () => {
    const on = !player.loop;
    player.setLoop(on ? timeline.barAt(a.currentTime) : null);
    if (on) timeline.reveal(player.loop);
    $('loop-bar').setAttribute('aria-pressed', String(on));
  };
  // An audio link lives for a while only: when it has expired, ask for a new one and go on.
  a.addEventListener('error', async () => {
    if (!playing) return;
    const at = a.currentTime;
    try {
      a.src = (await api('POST', `/v1/jobs/${playing.id}/audio-ticket`)).url;
      a.currentTime = at;
    } catch (err) {
      onApiError(`The song cannot be played: ${err.message}`, err);
    }
  });
}

async function play(job, what = '') {
  playing = job;
  board?.draw(); // marks the job in the player
  $('player-section').hidden = false;
  const facts = [job.track_name, styleWords(job), tempoWords(job), `seed ${job.options.seed}`].filter(Boolean);
  $('player-title').textContent = `${what ? `${what}: ` : ''}${facts.join(' · ')}`;
  $('player-message').textContent = 'Loading the dance and the song…';
  if (!player) {
    try {
      player = new Player($('stage'), audio());
    } catch (err) {
      $('player-message').textContent = `This browser cannot show 3D (WebGL): ${err.message}`;
      return;
    }
    timeline = new Timeline($('timeline'), $('overview'), audio());
    timeline.onChange = (text) => { $('zoom-text').textContent = text; };
    player.onFrame = (t) => {
      timeline.draw(t, player.loop);
      cueSheet.draw(t);
      $('clock').textContent = `${clock(t)} / ${clock(timeline.duration)}`;
    };
  }
  audio().pause();
  cueSheet.set(job.summary?.routine ?? null, job.summary?.tempo_bpm ?? 0);
  timeline.setCues(job.summary?.routine?.cues ?? null);
  player.setLoop(null);
  $('loop-bar').setAttribute('aria-pressed', 'false');
  $('player-section').scrollIntoView({ behavior: 'smooth' });
  try {
    const [marks, files, ticket] = await Promise.all([
      api('GET', `/v1/jobs/${job.id}/timeline`),
      api('GET', `/v1/jobs/${job.id}/artifacts`),
      api('POST', `/v1/jobs/${job.id}/audio-ticket`),
    ]);
    timeline.setData(marks);
    downloadList($('downloads'), files.artifacts);
    audio().src = ticket.url;
    const glb = files.artifacts.find((f) => f.kind === 'glb');
    if (!glb) throw new Error('this job has no glb file; render it again with glb to play it in 3D');
    await player.load(glb.url);
    $('player-message').textContent = '';
  } catch (err) {
    $('player-message').textContent = `The dance cannot be shown: ${err.message}`;
    if (err.status === 401) onApiError(err.message, err);
  }
}

// Handles for people debugging the page and for the browser tests, read-only: the two clocks, the
// timeline's window and its cue bands (pixels), the followed point and where the figure was last drawn in the picture.
window.choreoStudio = {
  get danceTime() { return player?.danceTime ?? null; },
  get audioTime() { return audio().currentTime; },
  get playingJob() { return playing?.id ?? null; },
  get countingIn() { return cueSheet?.countingIn ?? false; },
  get loop() { return player?.loop ?? null; },
  get timelineWindow() { return timeline?.window ?? null; },
  get cueBands() { return timeline?.cueBands ?? []; },
  get followPoint() { return player ? player.look.toArray() : null; },
  figureBox() { return player?.figureBox() ?? null; },
};

$('signin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('key-input').value.trim();
  $('key-input').value = '';
  signIn(key);
});
$('sign-out').onclick = () => signOut();
setUpUpload();
setUpPlayer();
await loadOptions();
if (session.key) signIn(session.key);
