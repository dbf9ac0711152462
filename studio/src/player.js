// The 3D player: the job's skinned mannequin (its GLB, through three.js's GLTFLoader) on a floor,
// with an orbit camera and front, side and top views. The dance has no clock of its own: every
// frame poses the mannequin at the audio element's currentTime, so sound and dance cannot drift,
// whatever the speed, a seek or a stall while the song loads.
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const TARGET = new THREE.Vector3(0, 0.95, 0);
const VIEWS = {
  front: new THREE.Vector3(0, 1.2, 3.6), // the dancer faces +Z
  side: new THREE.Vector3(3.6, 1.2, 0),
  top: new THREE.Vector3(0, 4.6, 0.01),
};

export class Player {
  /** @param {HTMLElement} stage where the canvas goes; @param {HTMLAudioElement} audio the clock */
  constructor(stage, audio) {
    this.audio = audio;
    this.loop = null; // {start, end} seconds while a bar loops
    this.danceTime = 0; // the time the mannequin was last posed at, seconds
    this.onFrame = null;
    this.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
    this.renderer.shadowMap.enabled = true;
    stage.appendChild(this.renderer.domElement);
    this.canvas = this.renderer.domElement;

    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0xdfe6ee);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x8d7c6a, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 2.2);
    sun.position.set(2.5, 5, 3.5);
    sun.castShadow = true;
    sun.shadow.mapSize.set(1024, 1024);
    Object.assign(sun.shadow.camera, { left: -3, right: 3, top: 3, bottom: -3 });
    this.scene.add(sun);
    const floor = new THREE.Mesh(
      new THREE.CircleGeometry(4, 64),
      new THREE.MeshStandardMaterial({ color: 0xf4f1ec, roughness: 0.9 }),
    );
    floor.rotation.x = -Math.PI / 2;
    floor.receiveShadow = true;
    this.scene.add(floor);
    const grid = new THREE.GridHelper(8, 16, 0xb0b8c0, 0xd0d6dc);
    grid.position.y = 0.002;
    this.scene.add(grid);

    this.camera = new THREE.PerspectiveCamera(38, 2, 0.05, 100);
    this.controls = new OrbitControls(this.camera, this.canvas);
    this.controls.target.copy(TARGET);
    this.setView('front');

    this.model = null;
    this.mixer = null;
    new ResizeObserver(() => this.resize()).observe(stage);
    this.resize();
    this.renderer.setAnimationLoop(() => this.frame());
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

  setView(name) {
    this.camera.position.copy(VIEWS[name]);
    this.controls.target.copy(TARGET);
    this.controls.update();
  }

  /** Load a job's GLB (a URL); resolves once the mannequin stands on the floor. */
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
    const action = this.mixer.clipAction(clip);
    action.setLoop(THREE.LoopOnce, 1);
    action.clampWhenFinished = true;
    action.play();
    this.duration = clip.duration;
  }

  /** Loop [start, end) seconds of the song, or stop looping with null. */
  setLoop(span) {
    this.loop = span;
    if (span && (this.audio.currentTime < span.start || this.audio.currentTime >= span.end)) {
      this.audio.currentTime = span.start;
    }
  }

  frame() {
    let t = this.audio.currentTime;
    if (this.loop && t >= this.loop.end) {
      this.audio.currentTime = this.loop.start;
      t = this.loop.start;
    }
    if (this.mixer) this.mixer.setTime(t);
    this.danceTime = t;
    this.controls.update();
    this.renderer.render(this.scene, this.camera);
    this.onFrame?.(t);
  }
}
