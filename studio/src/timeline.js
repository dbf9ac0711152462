// The player's timeline: the song's beats, bars and (when the job was planned) the plan's phrases,
// the play head and the looped bar, over a window of the song that zooms and pans, so the bar
// under the play head stays readable at any song length (eight bars are shown at first). Above
// it, the whole song in a thin strip with the window marked: click or drag there to move the window.
// Click or drag the timeline to scrub; arrow keys step a beat, + and - zoom, 0 shows the whole song;
// the mouse wheel zooms about the pointer (with shift, or sideways, it pans). A workout's cue sheet
// is drawn in a lane under the beats: one band per 8-count, labelled with the move and its side,
// coloured by the move (the same move, the same colour) and as tall as its intensity (MET).

const MIN_SPAN_S = 2;
const DEFAULT_BARS = 8;
const COLOURS = {
  ground: '#f6f8fa', beat: '#8c959f', bar: '#24292f', head: '#cf222e', text: '#57606a',
  phrase: ['rgba(191,135,0,0.22)', 'rgba(191,135,0,0.10)'], phraseEdge: '#bf8700',
  loop: 'rgba(9,105,218,0.30)', loopEdge: '#0969da',
};
const CUE_LANE_PX = 24; // the cue lane's height, added under the marks when there is a cue sheet
const CUE_FULL_MET = 9; // a band's height is its MET's share of this (vigorous is over 6), at least a quarter

/** The move's colour: hues spread by the golden angle, so neighbouring moves differ. */
function moveColour(move) {
  return `hsl(${Math.round((move * 137.508) % 360)}, 62%, 58%)`;
}

function clock(t) {
  const m = Math.floor(t / 60);
  return `${m}:${String(Math.floor(t - 60 * m)).padStart(2, '0')}`;
}

export class Timeline {
  /**
   * @param {HTMLCanvasElement} canvas the zoomed timeline
   * @param {HTMLCanvasElement} overview the whole song
   * @param {HTMLAudioElement} audio the clock, and what scrubbing moves
   */
  constructor(canvas, overview, audio) {
    this.canvas = canvas;
    this.overview = overview;
    this.audio = audio;
    this.data = { duration_s: 0, beat_times: [], bar_times: [], phrases: [] };
    this.cues = []; // the workout's 8-counts (a summary's routine cues with index > 0)
    this.cueBands = []; // the bands last drawn, for the page's handles
    this.marksHeight = canvas.height;
    this.start = 0; // the window: [start, start + span) seconds
    this.span = 0;
    this.follow = true; // the window turns its page when the play head leaves it
    this.onChange = null; // called when the window moves, with a line saying what it shows
    const scrub = (event) => {
      this.follow = true;
      audio.currentTime = this.timeAt(canvas, event.clientX, this.start, this.span);
    };
    canvas.addEventListener('pointerdown', (event) => {
      canvas.setPointerCapture(event.pointerId);
      scrub(event);
      canvas.onpointermove = scrub;
    });
    canvas.addEventListener('pointerup', () => { canvas.onpointermove = null; });
    const moveTo = (event) => {
      const t = this.timeAt(overview, event.clientX, 0, this.duration);
      this.setWindow(t - this.span / 2, this.span);
      this.follow = this.shows(audio.currentTime);
    };
    overview.addEventListener('pointerdown', (event) => {
      overview.setPointerCapture(event.pointerId);
      moveTo(event);
      overview.onpointermove = moveTo;
    });
    overview.addEventListener('pointerup', () => { overview.onpointermove = null; });
    canvas.addEventListener('wheel', (event) => {
      event.preventDefault();
      const sideways = event.shiftKey ? event.deltaX || event.deltaY : event.deltaX;
      if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
        this.pan((sideways / canvas.clientWidth) * this.span);
      } else {
        this.zoom(Math.exp(event.deltaY * 0.002), this.timeAt(canvas, event.clientX, this.start, this.span));
      }
    }, { passive: false });
    canvas.addEventListener('keydown', (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step) {
        event.preventDefault();
        this.follow = true;
        audio.currentTime = Math.min(this.duration, Math.max(0, audio.currentTime + step * this.beatLength()));
      } else if (event.key === '+' || event.key === '=') this.zoom(0.5);
      else if (event.key === '-') this.zoom(2);
      else if (event.key === '0') this.showAll();
    });
  }

  get duration() { return this.data.duration_s || this.audio.duration || 0; }

  beatLength() {
    const beats = this.data.beat_times;
    return beats.length > 1 ? (beats[beats.length - 1] - beats[0]) / (beats.length - 1) : 0.5;
  }

  barLength() {
    const bars = this.data.bar_times;
    return bars.length > 1 ? (bars[bars.length - 1] - bars[0]) / (bars.length - 1) : 4 * this.beatLength();
  }

  /** A new song's marks; the window goes back to the first eight bars. */
  setData(data) {
    this.data = data;
    this.follow = true;
    this.setWindow(0, DEFAULT_BARS * this.barLength());
  }

  /** A workout's cue sheet (a summary's ``routine.cues``), or none for a plain dance: no lane. */
  setCues(cues) {
    this.cues = (cues ?? []).filter((c) => c.index > 0);
    this.cueBands = [];
    const h = this.marksHeight + (this.cues.length ? CUE_LANE_PX : 0);
    this.canvas.height = h;
    this.canvas.style.height = `${h}px`;
  }

  /** Show [start, start + span) seconds, kept inside the song. */
  setWindow(start, span) {
    const whole = this.duration;
    this.span = Math.min(whole || span, Math.max(Math.min(MIN_SPAN_S, whole || MIN_SPAN_S), span));
    this.start = Math.min(Math.max(0, whole - this.span), Math.max(0, start));
    const bars = this.span / this.barLength();
    const what = this.span >= whole - 1e-6 ? 'the whole song' : `${bars < 10 ? bars.toFixed(1) : Math.round(bars)} bars`;
    this.onChange?.(`Showing ${what}, ${clock(this.start)} to ${clock(this.start + this.span)}.`);
  }

  /** Zoom by `factor` (under 1: closer) about the time `about` (the play head unless given). */
  zoom(factor, about = this.audio.currentTime) {
    const span = this.span * factor;
    const share = this.span ? (about - this.start) / this.span : 0.5;
    this.setWindow(about - share * Math.max(span, MIN_SPAN_S), span);
    this.follow = this.shows(this.audio.currentTime);
  }

  pan(seconds) {
    this.setWindow(this.start + seconds, this.span);
    this.follow = this.shows(this.audio.currentTime);
  }

  showAll() { this.setWindow(0, this.duration); this.follow = true; }

  shows(t) { return t >= this.start && t <= this.start + this.span; }

  /** Bring the span {start, end} (a looped bar) wholly into the window, in its middle when it moves. */
  reveal({ start, end }) {
    if (start >= this.start && end <= this.start + this.span) return;
    const span = Math.max(this.span, 1.5 * (end - start));
    this.setWindow((start + end) / 2 - span / 2, span);
  }

  /** The window, for the page's handles: {start, end} seconds and the timeline's width, pixels. */
  get window() { return { start: this.start, end: this.start + this.span, width: this.canvas.clientWidth }; }

  timeAt(canvas, clientX, start, span) {
    const box = canvas.getBoundingClientRect();
    return start + Math.min(1, Math.max(0, (clientX - box.left) / box.width)) * span;
  }

  /** The bar around time t as {start, end}: from the bar marks, else four beats. */
  barAt(t) {
    const bars = this.data.bar_times;
    let k = bars.length - 1;
    while (k >= 0 && bars[k] > t) k -= 1;
    if (k >= 0) return { start: bars[k], end: bars[k + 1] ?? this.duration };
    const length = 4 * this.beatLength();
    const start = Math.floor(t / length) * length;
    return { start, end: Math.min(this.duration, start + length) };
  }

  /** Keep the play head in the window while following it: turn the page when it leaves. */
  keepInView(t) {
    if (!this.follow || !this.span || (t >= this.start && t <= this.start + this.span * 0.94)) return;
    this.setWindow(t - this.span * 0.06, this.span);
  }

  draw(t, loop) {
    if (!this.span && this.duration) this.setWindow(0, DEFAULT_BARS * this.barLength());
    if (loop && this.follow) this.reveal(loop); // a looped bar stays in view, whole
    else this.keepInView(t);
    this.drawWindow(t, loop);
    this.drawOverview(t, loop);
    this.canvas.setAttribute('aria-valuenow', t.toFixed(1));
    this.canvas.setAttribute('aria-valuetext', `${clock(t)} of ${clock(this.duration)}`);
  }

  surface(canvas) {
    const w = canvas.clientWidth || canvas.width;
    if (canvas.width !== w) canvas.width = w;
    return { g: canvas.getContext('2d'), w, h: canvas.height };
  }

  drawWindow(t, loop) {
    const { g, w, h: whole } = this.surface(this.canvas);
    const h = this.marksHeight;
    const { start, span } = this;
    const x = (s) => (span ? ((s - start) / span) * w : 0);
    const visible = (s) => s >= start - 1e-6 && s <= start + span + 1e-6;
    const top = 14; // the time ruler
    g.fillStyle = COLOURS.ground;
    g.fillRect(0, 0, w, h);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'top';
    this.data.phrases.forEach((p, i) => {
      if (p.end_s < start || p.start_s > start + span) return;
      const x0 = Math.max(0, x(p.start_s));
      const x1 = Math.min(w, x(p.end_s));
      g.fillStyle = COLOURS.phrase[i % 2];
      g.fillRect(x0, top, x1 - x0, h - top);
      g.fillStyle = COLOURS.phraseEdge;
      if (visible(p.start_s)) g.fillRect(x(p.start_s), top, 2, h - top);
      if (x1 - x0 > 60 && p.label) {
        g.fillStyle = COLOURS.text;
        g.fillText(p.label.slice(0, Math.floor((x1 - x0 - 8) / 6)), x0 + 4, h - 13);
      }
    });
    this.drawCues(g, x, w, h, whole - h);
    if (loop) {
      const x0 = x(loop.start);
      const x1 = x(loop.end);
      g.fillStyle = COLOURS.loop;
      g.fillRect(x0, 0, x1 - x0, whole);
      g.fillStyle = COLOURS.loopEdge;
      g.fillRect(x0 - 1, 0, 2, whole);
      g.fillRect(x1 - 1, 0, 2, whole);
      if (x1 - x0 > 60) g.fillText('loop', x0 + 26, top + 4);
    }
    const beatPx = (this.beatLength() / span) * w;
    if (beatPx >= 4) {
      g.fillStyle = COLOURS.beat;
      for (const b of this.data.beat_times) if (visible(b)) g.fillRect(x(b), h * 0.6, 1, h * 0.4);
    }
    const barPx = (this.barLength() / span) * w;
    g.fillStyle = COLOURS.bar;
    this.data.bar_times.forEach((b, i) => {
      if (!visible(b) || (barPx < 3 && i % Math.ceil(3 / barPx))) return;
      g.fillRect(x(b), top + 4, 1.5, h - top - 4);
      if (barPx >= 28) g.fillText(String(i + 1), x(b) + 3, top + 4);
    });
    // The ruler: a time label every 1, 2, 5, 10, 15, 30 or 60 s, as many as fit.
    const every = [1, 2, 5, 10, 15, 30, 60, 120].find((s) => (s / span) * w >= 60) ?? 300;
    g.fillStyle = COLOURS.text;
    for (let s = Math.ceil(start / every) * every; s <= start + span; s += every) {
      g.fillRect(x(s), 0, 1, 4);
      g.fillText(clock(s), x(s) + 2, 2);
    }
    if (visible(t)) {
      g.fillStyle = COLOURS.head;
      g.fillRect(x(t) - 1, 0, 3, whole);
    }
  }

  /** The cue lane, ``lane`` pixels tall from ``top``: the 8-counts in the window, each a band. */
  drawCues(g, x, w, top, lane) {
    this.cueBands = [];
    if (!this.cues.length) return;
    g.fillStyle = '#ffffff';
    g.fillRect(0, top, w, lane);
    for (const c of this.cues) {
      if (c.end_s <= this.start || c.start_s >= this.start + this.span) continue;
      const x0 = Math.max(0, x(c.start_s));
      const x1 = Math.min(w, x(c.end_s));
      const tall = Math.round((lane - 2) * Math.min(1, Math.max(0.25, c.met / CUE_FULL_MET)));
      const colour = moveColour(c.move);
      g.fillStyle = colour;
      g.fillRect(x0, top + lane - tall, Math.max(1, x1 - x0 - 1), tall);
      const label = `${c.name} ${c.side === 'left' ? 'L' : 'R'}`;
      const fits = Math.floor((x1 - x0 - 6) / 6);
      if (fits >= 3) {
        g.fillStyle = '#24292f';
        g.fillText(label.slice(0, fits), x0 + 3, top + lane - 13);
      }
      this.cueBands.push({ index: c.index, name: c.name, side: c.side, met: c.met, colour,
        x0, x1, top: top + lane - tall, height: tall });
    }
  }

  drawOverview(t, loop) {
    const { g, w, h } = this.surface(this.overview);
    const whole = this.duration;
    const x = (s) => (whole ? (s / whole) * w : 0);
    g.fillStyle = '#eaeef2';
    g.fillRect(0, 0, w, h);
    this.data.phrases.forEach((p, i) => {
      g.fillStyle = COLOURS.phrase[i % 2];
      g.fillRect(x(p.start_s), 0, x(p.end_s) - x(p.start_s), h);
    });
    if (loop) {
      g.fillStyle = COLOURS.loopEdge;
      g.fillRect(x(loop.start) - 1, 0, Math.max(3, x(loop.end) - x(loop.start)), h);
    }
    g.strokeStyle = COLOURS.bar;
    g.lineWidth = 1.5;
    g.strokeRect(x(this.start) + 0.75, 0.75, Math.max(4, x(this.start + this.span) - x(this.start)) - 1.5, h - 1.5);
    g.fillStyle = COLOURS.head;
    g.fillRect(x(t) - 1, 0, 2, h);
  }
}
