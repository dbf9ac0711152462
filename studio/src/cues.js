// A workout's cue sheet under the player: one row per 8-count (the move's name, its side, which
// repeat, the count where the next move starts, the intensity), the row being danced marked as the
// song plays, and a count-in ("5, 6, 7, 8" on the song's beat) before the routine's first 8-count
// when Play starts it from the top. Made from the job summary's routine (the finished motion's
// cue sheet); a dance without one hides the sheet.
import { el } from './dom.js';

export class CueSheet {
  constructor(box, countIn) {
    this.box = box;
    this.countIn = countIn;
    this.cues = [];
    this.rows = [];
    this.current = -1;
    this.timer = null;
  }

  /** Show ``routine`` (a summary's ``routine``, or null for a dance) at ``tempoBpm``. */
  set(routine, tempoBpm) {
    this.cancelCountIn();
    this.cues = routine?.cues ?? [];
    this.beatS = tempoBpm > 0 ? 60 / tempoBpm : 0.5;
    this.box.hidden = !this.cues.length;
    this.current = -1;
    if (!this.cues.length) { this.box.replaceChildren(); return; }
    const head = el('p', { className: 'muted', textContent:
      `Workout: ${routine.profile}, ${routine.impact} impact · ${routine.met.toFixed(1)} MET, ${routine.intensity_level} · ` +
      `${routine.kcal_per_min.toFixed(1)} kcal/min, ${Math.round(routine.kcal_total)} kcal at ${routine.body_mass_kg} kg` });
    const table = el('table', { className: 'cues' });
    table.append(el('tr', {}, ...['8-count', 'move', 'side', 'repeat', 'next move at count', 'intensity'].map((t) => el('th', { textContent: t }))));
    this.rows = this.cues.map((c) => {
      const cells = c.index > 0
        ? [String(c.index), c.name, c.side, `${c.repeat}`, c.next_move_count ? String(c.next_move_count) : '-', `${c.level} (${c.met.toFixed(1)} MET)`]
        : ['-', 'free (no steady beat)', '-', '-', '-', c.level];
      const row = el('tr', {}, ...cells.map((t) => el('td', { textContent: t })));
      row.dataset.start = String(c.start_s);
      table.append(row);
      return row;
    });
    this.box.replaceChildren(head, table);
  }

  /** Mark the cue danced at ``t`` seconds. */
  draw(t) {
    let i = -1;
    for (let k = 0; k < this.cues.length; k += 1) if (this.cues[k].start_s <= t + 1e-3) i = k;
    if (i === this.current) return;
    this.rows[this.current]?.classList.remove('now');
    this.rows[i]?.classList.add('now');
    this.current = i;
  }

  /** Start ``audio``: with a count-in of four beats when there is a routine and it starts from the top. */
  start(audio) {
    const first = this.cues.find((c) => c.index > 0);
    if (!first || audio.currentTime > first.start_s + 0.05) { audio.play(); return; }
    this.cancelCountIn();
    const counts = ['5', '6', '7', '8'];
    let k = 0;
    const tick = () => {
      if (k === counts.length) { this.countIn.hidden = true; this.timer = null; audio.play(); return; }
      this.countIn.hidden = false;
      this.countIn.textContent = counts[k];
      k += 1;
      this.timer = setTimeout(tick, this.beatS * 1000 / (audio.playbackRate || 1));
    };
    tick();
  }

  cancelCountIn() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.countIn) this.countIn.hidden = true;
  }

  get countingIn() { return this.timer !== null; }
}
