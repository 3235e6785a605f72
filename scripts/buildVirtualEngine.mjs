// The virtual engine's worker and just-bash, bundled beside the extension as dist/just-bash/, laid out
// like the package (dist/bundle/chunks + vendor/) because just-bash finds its own workers and CPython
// relative to its code: `new URL('./worker.js', import.meta.url)` and `../../../vendor/cpython-emscripten`.
// One ESM file per worker, without code splitting: split, just-bash's commands made about 200 files,
// more than VS Code's packager accepts without a warning (each file is a read when the extension loads).
// The price is a bigger file to parse when a virtual sandbox starts: measured through the CLI, bash
// `echo hi` about 20 ms slower (0.27 s against 0.25 s), a Python one-liner no slower (fewer files to read).
// The extension and CLI bundles never load any of it (they start the worker when a virtual sandbox opens).
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';

const PACKAGE = join('node_modules', 'just-bash');
export const VIRTUAL_OUT = join('dist', 'just-bash');
const CHUNKS = join(VIRTUAL_OUT, 'dist', 'bundle', 'chunks');

// The bundled CommonJS dependencies (undici, sql.js, ...) expect require, __filename and __dirname.
const banner = [
  "import { createRequire as __asCreateRequire } from 'node:module';",
  "import { fileURLToPath as __asFileURLToPath } from 'node:url';",
  "import { dirname as __asDirname } from 'node:path';",
  'const require = __asCreateRequire(import.meta.url);',
  'const __filename = __asFileURLToPath(import.meta.url);',
  'const __dirname = __asDirname(__filename);',
].join('\n');

/**
 * just-bash loads undici only for a fetch with network allowed, which the virtual engine never allows
 * (README, Engines): its 500 KB stay out of the worker, and a fetch that got there anyway fails saying so.
 */
const noNetwork = {
  name: 'virtual-engine-no-network',
  setup(build) {
    build.onResolve({ filter: /\/undici-[A-Z0-9]+\.js$/ }, (args) =>
      args.importer.includes(`${sep}just-bash${sep}`) ? { path: args.path, namespace: 'no-network' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-network' }, () => ({
      contents: "throw new Error('The virtual engine has no network; use the Docker engine with network allowed.');",
      loader: 'js',
    }));
  },
};

/** esbuild options for the workers (our code and just-bash; a session's persistent Python) and just-bash's own JavaScript and SQLite workers. */
export function virtualEngineBuild(common) {
  return {
    ...common,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    entryPoints: {
      virtualWorker: 'src/engines/virtual/virtualWorker.ts',
      // A session's persistent Python (CPython from vendor/, loaded by the worker itself).
      pythonWorker: 'src/engines/virtual/pythonWorker.ts',
      'js-exec-worker': join(PACKAGE, 'dist', 'bundle', 'chunks', 'js-exec-worker.js'),
      'sqlite3-worker': join(PACKAGE, 'dist', 'bundle', 'chunks', 'sqlite3-worker.js'),
    },
    outdir: CHUNKS,
    plugins: [noNetwork],
    banner: { js: banner },
    // Optional native compressors for tar's zstd and xz; tar says so when they are missing.
    external: ['@mongodb-js/zstd', 'node-liblzma'],
  };
}

/** The files just-bash loads at run time from beside its code: the CPython worker and WebAssembly. */
export async function copyVirtualEngineAssets() {
  // Chunk names carry content hashes: start clean so no stale chunk ships.
  await rm(VIRTUAL_OUT, { recursive: true, force: true });
  await mkdir(CHUNKS, { recursive: true });
  const manifest = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8'));
  await writeFile(
    join(VIRTUAL_OUT, 'package.json'),
    `${JSON.stringify({ name: 'just-bash', version: manifest.version, license: manifest.license, type: 'module', private: true }, null, 2)}\n`,
  );
  await cp(join(PACKAGE, 'LICENSE'), join(VIRTUAL_OUT, 'LICENSE'));
  await cp(join(PACKAGE, 'dist', 'bundle', 'chunks', 'worker.js'), join(CHUNKS, 'worker.js'));
  await cp(join(PACKAGE, 'vendor', 'cpython-emscripten'), join(VIRTUAL_OUT, 'vendor', 'cpython-emscripten'), {
    recursive: true,
  });
  await cp(
    join('node_modules', '@jitl', 'quickjs-wasmfile-release-sync', 'dist', 'emscripten-module.wasm'),
    join(CHUNKS, 'emscripten-module.wasm'),
  );
  await cp(join('node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'), join(CHUNKS, 'sql-wasm.wasm'));
}
