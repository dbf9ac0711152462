// The player's follow camera path: a track followed by a critically damped spring, run forward and
// then backward (no lag, a continuous speed), as the mp4 preview's camera does
// (exporters/video/follow.py: spring_smooth).

/**
 * Smooth an interleaved track (`dims` numbers a sample, `fps` samples a second).
 * The spring starts at rest on the first sample, the backward pass at rest on the forward pass's last.
 * @param {Float64Array} track
 * @param {number} dims
 * @param {number} fps
 * @param {number} halflifeS the time in which the spring takes up half of a step
 * @returns {Float64Array}
 */
export function springSmooth(track, dims, fps, halflifeS) {
  const n = track.length / dims;
  const y = (2 * Math.LN2) / halflifeS;
  const dt = 1 / fps;
  const e = Math.exp(-y * dt);
  const pass = (input, order) => {
    const out = new Float64Array(input.length);
    for (let d = 0; d < dims; d += 1) {
      let x = input[order(0) * dims + d];
      let v = 0;
      for (let k = 0; k < n; k += 1) {
        const i = order(k);
        const goal = input[i * dims + d];
        const j0 = x - goal;
        const j1 = v + j0 * y;
        x = e * (j0 + j1 * dt) + goal;
        v = e * (v - j1 * y * dt);
        out[i * dims + d] = x;
      }
    }
    return out;
  };
  const forward = pass(track, (k) => k);
  return pass(forward, (k) => n - 1 - k);
}
