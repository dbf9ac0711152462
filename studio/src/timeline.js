// The player's timeline: the song's beats, bars and (when the job was planned) the plan's phrase
// boundaries, the play head, and click or drag to scrub (arrow keys step a beat).

export class Timeline {
  constructor(canvas, audio) {
    this.canvas = canvas;
    this.audio = audio;
    this.data = { duration_s: 0, beat_times: [], bar_times: [], phrases: [] };
    const seek = (event) => {
      const box = canvas.getBoundingClientRect();
      const share = Math.min(1, Math.max(0, (event.clientX - box.left) / box.width));
      audio.currentTime = share * this.duration;
    };
    canvas.addEventListener('pointerdown', (event) => {
      canvas.setPointerCapture(event.pointerId);
      seek(event);
      canvas.onpointermove = seek;
    });
    canvas.addEventListener('pointerup', () => { canvas.onpointermove = null; });
    canvas.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      if (!step) return;
      event.preventDefault();
      audio.currentTime = Math.min(this.duration, Math.max(0, audio.currentTime + step * this.beatLength()));
    });
  }

  get duration() { return this.data.duration_s || this.audio.duration || 0; }

  beatLength() {
    const beats = this.data.beat_times;
    return beats.length > 1 ? (beats[beats.length - 1] - beats[0]) / (beats.length - 1) : 0.5;
  }

  setData(data) { this.data = data; }

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

  draw(t, loop) {
    const { canvas } = this;
    const w = canvas.clientWidth || canvas.width;
    if (canvas.width !== w) canvas.width = w;
    const h = canvas.height;
    const g = canvas.getContext('2d');
    const x = (s) => (this.duration ? (s / this.duration) * w : 0);
    g.fillStyle = '#f6f8fa';
    g.fillRect(0, 0, w, h);
    this.data.phrases.forEach((p, i) => {
      g.fillStyle = i % 2 ? 'rgba(191,135,0,0.10)' : 'rgba(191,135,0,0.22)';
      g.fillRect(x(p.start_s), 0, x(p.end_s) - x(p.start_s), h);
      g.fillStyle = '#bf8700';
      g.fillRect(x(p.start_s), 0, 2, h);
    });
    if (loop) {
      g.fillStyle = 'rgba(9,105,218,0.18)';
      g.fillRect(x(loop.start), 0, x(loop.end) - x(loop.start), h);
    }
    g.fillStyle = '#8c959f';
    for (const b of this.data.beat_times) g.fillRect(x(b), h * 0.55, 1, h * 0.45);
    g.fillStyle = '#24292f';
    for (const b of this.data.bar_times) g.fillRect(x(b), h * 0.2, 1.5, h * 0.8);
    g.fillStyle = '#cf222e';
    g.fillRect(x(t) - 1, 0, 3, h);
    canvas.setAttribute('aria-valuenow', t.toFixed(1));
  }
}
