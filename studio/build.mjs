// Build Choreo Studio into dist/: the page's own files from src/ and the few three.js modules it
// imports, copied from node_modules (npm ci installs the pinned three), so the API serves every byte
// itself: no CDN, works offline. Run by `make studio`, the tests and the Docker image.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const three = join(here, 'node_modules', 'three');
const dist = join(here, 'dist');

// Files the page imports (through the import map in index.html) and what they import in turn.
const VENDORED = [
  'LICENSE',
  'build/three.module.js',
  'build/three.core.js',
  'examples/jsm/loaders/GLTFLoader.js',
  'examples/jsm/controls/OrbitControls.js',
  'examples/jsm/utils/BufferGeometryUtils.js',
  'examples/jsm/utils/SkeletonUtils.js',
];

if (!existsSync(join(three, 'package.json'))) {
  console.error('studio/build.mjs: three is not installed; run `npm ci` in studio/ first');
  process.exit(1);
}
rmSync(dist, { recursive: true, force: true });
cpSync(join(here, 'src'), dist, { recursive: true });
for (const file of VENDORED) {
  const target = join(dist, 'vendor', 'three', file);
  mkdirSync(dirname(target), { recursive: true });
  cpSync(join(three, file), target);
}
const version = JSON.parse(readFileSync(join(three, 'package.json'), 'utf8')).version;
writeFileSync(join(dist, 'vendor', 'VERSIONS.json'), JSON.stringify({ three: version }, null, 2) + '\n');
console.log(`studio: built ${dist} (three ${version})`);
