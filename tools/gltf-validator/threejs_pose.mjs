#!/usr/bin/env node
// Load a .glb with three.js's GLTFLoader (the loader most web viewers use), play its
// first animation with an AnimationMixer and print what three.js sees, as JSON.
//
// Usage: node threejs_pose.mjs FILE.glb TIME_S [TIME_S...]
// Stdout: {"clip", "duration_s", "tracks", "asset", "scene_extras", "skinned_meshes", "bones", "node_names",
//          "positions": [time][node][xyz] world positions of the first `bones` nodes}
import { readFile } from "node:fs/promises";
import * as THREE from "three";
import { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";

async function main(file, times) {
  const data = await readFile(file);
  const bytes = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  const gltf = await new GLTFLoader().parseAsync(bytes, "");
  const clip = gltf.animations[0];
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(clip).play();

  const skinned = [];
  gltf.scene.traverse((object) => {
    if (object.isSkinnedMesh) skinned.push(object);
  });
  const bones = skinned.length ? skinned[0].skeleton.bones : [];
  const positions = [];
  const world = new THREE.Vector3();
  for (const time of times) {
    mixer.setTime(time);
    gltf.scene.updateMatrixWorld(true);
    positions.push(bones.map((bone) => bone.getWorldPosition(world).toArray()));
  }
  return {
    clip: clip ? clip.name : null,
    duration_s: clip ? clip.duration : null,
    tracks: clip ? clip.tracks.length : 0,
    asset: gltf.asset,
    scene_extras: gltf.scene.userData,
    skinned_meshes: skinned.length,
    bones: bones.length,
    node_names: bones.map((bone) => bone.name),
    positions,
  };
}

const [file, ...times] = process.argv.slice(2);
if (!file || times.length === 0) {
  process.stderr.write("usage: node threejs_pose.mjs FILE.glb TIME_S [TIME_S...]\n");
  process.exit(2);
}
try {
  const report = await main(file, times.map(Number));
  process.stdout.write(JSON.stringify(report) + "\n");
} catch (err) {
  process.stderr.write(`${file}: three.js could not load it: ${err && err.message ? err.message : err}\n`);
  process.exit(1);
}
