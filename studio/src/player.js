// The 3D player: the job's skinned mannequin (its GLB, through three.js's GLTFLoader) on a floor,
// with an orbit camera and front, side and top views. The dance has no clock of its own: every
// frame poses the mannequin at the audio element's currentTime, so sound and dance cannot drift,
// whatever the speed, a seek or a stall while the song loads.
//
// The camera follows the dancer: it looks at the root's floor position smoothed by a critically
// damped spring run forward and back over the whole dance (no lag, a continuous speed), so travel
// reads as the floor's grid moving under the dancer. The preset views stand as far off as the
// body ever reaches from that point needs, measured from the dance when it loads, so the whole
// figure stays in the picture at every moment; orbiting and zooming stay the viewer's.
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { springSmooth } from './follow.js';

const SAMPLE_FPS = 15; // how often the dance is sampled to measure its path and reach
const FOLLOW_HALFLIFE_S = 0.5; // as the mp4 preview's camera (exporters/video/follow.py)
const FILL = 0.9; // the body's reach may fill this share of the picture's half-width and half-height
const BACKGROUND = 0xdfe6ee;
const VIEWS = { // where each view looks from, as a direction from the followed point (the dancer faces +Z)
  front: new THREE.Vector3(0, 0.2, 1).normalize(), // 11 degrees above the floor, so its grid shows
  side: new THREE.Vector3(1, 0.2, 0).normalize(),
  top: new THREE.Vector3(0, 1, 0.003).normalize(),
};
const SUN_OFFSET = new THREE.Vector3(2.5, 5, 3.5);

/**
 * Sample the dance: the root's floor track, smoothed (the followed point), and the box, relative to
 * the followed point, that holds the whole body at every sample (the joints, and the mesh around
 * them as measured on a few poses).
 */
function measureDance(model, mixer, duration) {
  const skinned = [];
  model.traverse((node) => { if (node.isSkinnedMesh) skinned.push(node); });
  const bones = skinned[0].skeleton.bones;
  const count = Math.max(2, Math.ceil(duration * SAMPLE_FPS) + 1);
  const joints = new Float32Array(count * bones.length * 3);
  const root = new Float64Array(count * 2);
  const p = new THREE.Vector3();
  const meshBox = new THREE.Box3();
  const jointBox = new THREE.Box3();
  const margin = new THREE.Vector3(0.05, 0.05, 0.05); // beyond the joints: the capsules' radius, the head
  const marginMax = new THREE.Vector3(0.05, 0.05, 0.05);
  const posesForMargin = 24;
  for (let i = 0; i < count; i += 1) {
    mixer.setTime(Math.min(duration, i / SAMPLE_FPS));
    model.updateMatrixWorld(true);
    jointBox.makeEmpty();
    bones.forEach((bone, b) => {
      p.setFromMatrixPosition(bone.matrixWorld);
      joints.set([p.x, p.y, p.z], (i * bones.length + b) * 3);
      jointBox.expandByPoint(p);
    });
    root[2 * i] = joints[i * bones.length * 3];
    root[2 * i + 1] = joints[i * bones.length * 3 + 2];
    if (i % Math.ceil(count / posesForMargin) === 0) {
      meshBox.makeEmpty();
      for (const mesh of skinned) {
        mesh.computeBoundingBox();
        meshBox.union(mesh.boundingBox.clone().applyMatrix4(mesh.matrixWorld));
      }
      margin.max(jointBox.min.clone().sub(meshBox.min));
      marginMax.max(meshBox.max.clone().sub(jointBox.max));
    }
  }
  const follow = springSmooth(root, 2, SAMPLE_FPS, FOLLOW_HALFLIFE_S);
  const reach = new THREE.Box3();
  const pathBox = new THREE.Box2();
  for (let i = 0; i < count; i += 1) {
    const fx = follow[2 * i];
    const fz = follow[2 * i + 1];
    pathBox.expandByPoint(new THREE.Vector2(fx, fz));
    for (let b = 0; b < bones.length; b += 1) {
      const k = (i * bones.length + b) * 3;
      reach.expandByPoint(p.set(joints[k] - fx, joints[k + 1], joints[k + 2] - fz));
    }
  }
  reach.min.sub(margin);
  reach.max.add(marginMax);
  const centre = pathBox.getCenter(new THREE.Vector2());
  let radius = 0;
  for (let i = 0; i < count; i += 1) radius = Math.max(radius, Math.hypot(follow[2 * i] - centre.x, follow[2 * i + 1] - centre.y));
  mixer.setTime(0);
  return { follow, count, reach, lookHeight: (reach.min.y + reach.max.y) / 2, centre, radius };
}

export class Player {
  /** @param {HTMLElement} stage where the canvas goes; @param {HTMLAudioElement} audio the clock */
  constructor(stage, audio) {
    this.audio = audio;
    this.loop = null; // {start, end} seconds while a bar loops
    this.danceTime = 0; // the time the mannequin was last posed at, seconds
    this.onFrame = null;
    this.view = 'front';
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.renderer.shadowMap.enabled = true;
    stage.appendChild(this.renderer.domElement);
    this.canvas = this.renderer.domElement;

    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(BACKGROUND);
    this.scene.fog = new THREE.Fog(BACKGROUND, 14, 34);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x8d7c6a, 1.6));
    this.sun = new THREE.DirectionalLight(0xffffff, 2.2);
    this.sun.position.copy(SUN_OFFSET);
    this.sun.castShadow = true;
    this.sun.shadow.mapSize.set(1024, 1024);
    Object.assign(this.sun.shadow.camera, { left: -3, right: 3, top: 3, bottom: -3 });
    this.scene.add(this.sun, this.sun.target);
    this.ground = new THREE.Group();
    this.scene.add(this.ground);
    this.placeFloor(new THREE.Vector2(0, 0), 0);

    this.camera = new THREE.PerspectiveCamera(38, 2, 0.05, 100);
    this.controls = new OrbitControls(this.camera, this.canvas);
    this.look = new THREE.Vector3(0, 0.95, 0); // the followed point the camera looks at
    this.controls.target.copy(this.look);

    this.model = null;
    this.mixer = null;
    this.dance = null;
    new ResizeObserver(() => this.resize()).observe(stage);
    this.resize();
    this.setView('front');
    this.renderer.setAnimationLoop(() => this.frame());
  }

  /**
   * A floor with a half-metre grid under the whole path (centre, radius in metres), fading into the
   * fog. The grid is a texture, mipmapped and filtered for the low angles of the front and side views.
   */
  placeFloor(centre, radius) {
    for (const old of [...this.ground.children]) {
      this.ground.remove(old);
      old.geometry.dispose();
      old.material.map?.dispose();
      old.material.dispose();
    }
    const size = 2 * Math.ceil(radius + 12); // whole metres, even: one texture tile a metre
    const floor = new THREE.Mesh(
      new THREE.PlaneGeometry(size, size),
      new THREE.MeshStandardMaterial({ color: 0xffffff, roughness: 0.9, map: this.gridTexture(size) }),
    );
    floor.rotation.x = -Math.PI / 2;
    floor.position.set(Math.round(centre.x), 0, Math.round(centre.y)); // on whole metres: lines on the half-metres
    floor.receiveShadow = true;
    this.ground.add(floor);
  }

  /** A metre of floor with the half-metre grid's lines, repeated `size` times each way. */
  gridTexture(size) {
    const px = 256;
    const canvas = Object.assign(document.createElement('canvas'), { width: px, height: px });
    const g = canvas.getContext('2d');
    g.fillStyle = '#f4f1ec';
    g.fillRect(0, 0, px, px);
    g.fillStyle = '#c2c9d0';
    for (const at of [0, px / 2]) {
      g.fillRect(at, 0, 3, px);
      g.fillRect(0, at, px, 3);
    }
    const texture = new THREE.CanvasTexture(canvas);
    texture.colorSpace = THREE.SRGBColorSpace;
    texture.wrapS = texture.wrapT = THREE.RepeatWrapping;
    texture.repeat.set(size, size);
    texture.anisotropy = this.renderer.capabilities.getMaxAnisotropy();
    return texture;
  }

  resize() {
    const { clientWidth: w, clientHeight: h } = this.canvas.parentElement;
    if (!w || !h) return;
    this.renderer.setSize(w, h, false);
    this.canvas.style.width = '100%';
    this.canvas.style.height = '100%';
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  /** How far from the followed point a view must stand for the body's whole reach to fit the picture. */
  viewDistance(name) {
    const reach = this.dance?.reach ?? new THREE.Box3(new THREE.Vector3(-0.9, 0, -0.9), new THREE.Vector3(0.9, 2.1, 0.9));
    const height = this.dance?.lookHeight ?? 0.95;
    const corners = [];
    for (const x of [reach.min.x, reach.max.x]) {
      for (const y of [reach.min.y, reach.max.y]) {
        for (const z of [reach.min.z, reach.max.z]) corners.push(new THREE.Vector3(x, y - height, z));
      }
    }
    const probe = this.camera.clone();
    const fits = (distance) => {
      probe.position.copy(VIEWS[name]).multiplyScalar(distance);
      probe.lookAt(0, 0, 0);
      probe.updateMatrixWorld(true);
      return corners.every((corner) => {
        if (corner.clone().applyMatrix4(probe.matrixWorldInverse).z > -probe.near) return false;
        const ndc = corner.clone().project(probe);
        return Math.abs(ndc.x) <= FILL && Math.abs(ndc.y) <= FILL;
      });
    };
    let near = 0.5;
    let far = 60;
    for (let i = 0; i < 40; i += 1) {
      const mid = (near + far) / 2;
      if (fits(mid)) far = mid; else near = mid;
    }
    return far;
  }

  setView(name) {
    this.view = name;
    this.camera.position.copy(VIEWS[name]).multiplyScalar(this.viewDistance(name)).add(this.look);
    this.controls.target.copy(this.look);
    this.controls.update();
  }

  /** Load a job's GLB (a URL); resolves once the mannequin stands on the floor, framed. */
  async load(url) {
    const gltf = await new GLTFLoader().loadAsync(url);
    if (this.model) { // the previous job's dance: free its buffers on the GPU
      this.scene.remove(this.model);
      this.model.traverse((node) => { node.geometry?.dispose(); node.material?.dispose?.(); });
    }
    this.model = gltf.scene;
    this.model.traverse((node) => { if (node.isMesh) { node.castShadow = true; node.frustumCulled = false; } });
    this.scene.add(this.model);
    this.mixer = new THREE.AnimationMixer(this.model);
    const clip = gltf.animations[0];
    if (!clip) throw new Error('the GLB has no animation');
    this.action = this.mixer.clipAction(clip);
    this.action.setLoop(THREE.LoopOnce, 1);
    this.action.clampWhenFinished = true;
    this.action.play();
    this.duration = clip.duration;
    this.dance = measureDance(this.model, this.mixer, clip.duration);
    this.action.reset(); // measuring ran it to its end, where a clamped action stops
    this.placeFloor(this.dance.centre, this.dance.radius);
    this.look.copy(this.followAt(this.audio.currentTime));
    this.setView(this.view);
  }

  /** The point the camera looks at when the dance is at time t: the smoothed root, at the body's middle. */
  followAt(t) {
    const { follow, count, lookHeight } = this.dance;
    const at = Math.min(count - 1, Math.max(0, t * SAMPLE_FPS));
    const i = Math.min(count - 2, Math.floor(at));
    const share = at - i;
    const x = follow[2 * i] * (1 - share) + follow[2 * i + 2] * share;
    const z = follow[2 * i + 1] * (1 - share) + follow[2 * i + 3] * share;
    return new THREE.Vector3(x, lookHeight, z);
  }

  /** Loop [start, end) seconds of the song, or stop looping with null. */
  setLoop(span) {
    this.loop = span;
    if (span && (this.audio.currentTime < span.start || this.audio.currentTime >= span.end)) {
      this.audio.currentTime = span.start;
    }
  }

  /** The figure's box in the picture as it was last drawn: normalized device coordinates, -1..1 inside. */
  figureBox() {
    const box = { left: Infinity, right: -Infinity, bottom: Infinity, top: -Infinity };
    if (!this.model) return null;
    const v = new THREE.Vector3();
    this.camera.updateMatrixWorld();
    this.model.updateMatrixWorld(true);
    this.model.traverse((mesh) => {
      if (!mesh.isSkinnedMesh) return;
      const n = mesh.geometry.attributes.position.count;
      for (let i = 0; i < n; i += 1) {
        mesh.getVertexPosition(i, v).applyMatrix4(mesh.matrixWorld).project(this.camera);
        box.left = Math.min(box.left, v.x);
        box.right = Math.max(box.right, v.x);
        box.bottom = Math.min(box.bottom, v.y);
        box.top = Math.max(box.top, v.y);
      }
    });
    return box;
  }

  frame() {
    let t = this.audio.currentTime;
    if (this.loop && t >= this.loop.end) {
      this.audio.currentTime = this.loop.start;
      t = this.loop.start;
    }
    if (this.mixer) {
      // At the song's end the clamped action stops; a seek back must find it playing again.
      if (this.action.paused || !this.action.enabled) this.action.reset();
      this.mixer.setTime(t);
      const look = this.followAt(t);
      this.camera.position.add(look.clone().sub(this.look)); // the viewer's orbit and zoom go along
      this.look.copy(look);
      this.controls.target.copy(look);
      this.sun.position.copy(look).add(SUN_OFFSET);
      this.sun.target.position.copy(look);
    }
    this.danceTime = t;
    this.controls.update();
    this.renderer.render(this.scene, this.camera);
    this.onFrame?.(t);
  }
}
