/**
 * Looks at a demo report the way a reader does, in Debian's headless
 * Chromium (the system `chromium`; nothing is downloaded): measures whether
 * the page overflows horizontally at a given width, and takes screenshots.
 *
 * Headless Chromium will not make a window narrower than 500 px, so the
 * report is loaded into an `<iframe srcdoc>` exactly `width` px wide inside a
 * wrapper page: the iframe is the report's viewport (its media queries see
 * `width`), and being same-origin, the wrapper's script can measure it and
 * write the numbers into the DOM that `--dump-dom` prints. No DevTools
 * protocol, no driver library.
 *
 * `pnpm demo:screenshots [--report <file>] [--out-dir <dir>]` runs
 * `pnpm demo --quick` (unless given a report) and writes
 * `report-375.png` and `report-1400.png` into `demo-screenshots/` (ignored by git).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** What the wrapper page measured in the report's iframe. */
export interface PageMeasure {
  /** The iframe's viewport width (the width asked for). */
  innerWidth: number;
  /** `document.documentElement.scrollWidth`: above `innerWidth` means a horizontal scrollbar. */
  scrollWidth: number;
  /** Height of the whole page, px. */
  scrollHeight: number;
  /** Elements sticking out past the right edge (outside any scrolling box), as `tag.class: text`. */
  overflowing: string[];
}

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium executable: `$BREAKWATER_CHROMIUM`, else the first system one found; throws if none. */
export function findChromium(): string {
  const fromEnv = process.env.BREAKWATER_CHROMIUM;
  const found = fromEnv ?? CANDIDATES.find((c) => existsSync(c));
  if (!found || !existsSync(found)) {
    throw new Error(
      `no Chromium found (tried ${fromEnv ?? CANDIDATES.join(', ')}): apt-get install chromium, or set BREAKWATER_CHROMIUM`,
    );
  }
  return found;
}

const attr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// Runs in the wrapper page once the report has loaded in the iframe.
const MEASURE = `
const f = document.getElementById('report');
f.addEventListener('load', () => {
  const d = f.contentDocument;
  const w = f.contentWindow;
  const iw = w.innerWidth;
  const scrolls = (el) => {
    for (let p = el.parentElement; p && p !== d.body; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden', 'clip'].includes(w.getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  const overflowing = [];
  for (const el of d.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= iw + 0.5 || scrolls(el)) continue;
    const cls = typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '';
    overflowing.push(el.tagName.toLowerCase() + cls + ': ' + (el.textContent || '').trim().slice(0, 40));
  }
  document.body.setAttribute('data-measure', JSON.stringify({
    innerWidth: iw,
    scrollWidth: d.documentElement.scrollWidth,
    scrollHeight: d.documentElement.scrollHeight,
    overflowing: overflowing.slice(0, 20),
  }));
});`;

function wrapper(html: string, width: number, height: number, measure: boolean): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>html,body{margin:0;background:#d8d8d8}iframe{display:block;border:0;background:#fff;width:${width}px;height:${height}px}</style></head><body><iframe id="report" srcdoc="${attr(html)}"></iframe>${measure ? `<script>${MEASURE}</script>` : ''}</body></html>`;
}

function chromium(args: readonly string[], profile: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      findChromium(),
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--hide-scrollbars',
        '--no-first-run',
        // Its own profile, so runs beside other Chromium instances never share one.
        `--user-data-dir=${profile}`,
        ...args,
      ],
      { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (error, stdout) => (error ? reject(error) : resolvePromise(stdout)),
    );
  });
}

async function withScratch<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'breakwater-chromium-'));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Loads the HTML file at `htmlPath` in a `width`-px viewport and measures it. */
export function measurePage(htmlPath: string, width: number): Promise<PageMeasure> {
  return withScratch(async (dir) => {
    const page = join(dir, 'measure.html');
    // A short iframe, so scrollHeight is the report's own height.
    await writeFile(page, wrapper(await readFile(htmlPath, 'utf8'), width, 100, true));
    const dom = await chromium(
      [`--window-size=${Math.max(width, 500)},800`, '--dump-dom', pathToFileURL(page).href],
      join(dir, 'profile'),
    );
    const raw = /data-measure="([^"]*)"/.exec(dom)?.[1];
    if (raw === undefined)
      throw new Error('Chromium printed no measurement (the report did not load)');
    const json = raw
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    return JSON.parse(json) as PageMeasure;
  });
}

/**
 * Screenshots the whole report at `width` px into `pngPath`. Below 500 px the
 * PNG is 500 px wide: the report's `width` px on the left, grey beyond.
 */
export async function screenshotPage(
  htmlPath: string,
  width: number,
  pngPath: string,
): Promise<PageMeasure> {
  const measure = await measurePage(htmlPath, width);
  const height = Math.min(measure.scrollHeight, 16_000);
  await withScratch(async (dir) => {
    const page = join(dir, 'shot.html');
    await writeFile(page, wrapper(await readFile(htmlPath, 'utf8'), width, height, false));
    await chromium(
      [
        `--window-size=${Math.max(width, 500)},${height}`,
        `--screenshot=${resolve(pngPath)}`,
        pathToFileURL(page).href,
      ],
      join(dir, 'profile'),
    );
  });
  return measure;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

async function cli(): Promise<number> {
  const { values } = parseArgs({
    options: {
      report: { type: 'string' },
      'out-dir': { type: 'string', default: join(ROOT, 'demo-screenshots') },
    },
  });
  const outDir = resolve(values['out-dir'] as string);
  await mkdir(outDir, { recursive: true });
  let report = values.report;
  if (report === undefined) {
    report = join(outDir, 'demo-report.html');
    console.log(`Running pnpm demo --quick (report: ${report})…`);
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'scripts', 'demo.mjs'), '--quick', '--out', report],
      { stdio: 'inherit' },
    );
    if (run.status !== 0) return run.status ?? 1;
  }
  let ok = true;
  for (const width of [375, 1400]) {
    const png = join(outDir, `report-${width}.png`);
    const m = await screenshotPage(report, width, png);
    const fits = m.scrollWidth <= width && m.overflowing.length === 0;
    ok &&= fits;
    console.log(
      `${png}: ${width} px wide, page ${m.scrollWidth}×${m.scrollHeight} px${fits ? '' : ` — OVERFLOWS: ${m.overflowing.join('; ')}`}`,
    );
  }
  return ok ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  cli().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
