/** A tiny SVG line-chart renderer for the self-contained report (no scripts, no network). */

/** One line of a chart; `undefined` values break the line. */
export interface ChartSeries {
  name: string;
  color: string;
  dash?: string;
  points: ReadonlyArray<readonly [number, number | undefined]>;
}

/** A shaded time band (a scenario phase). */
export interface ChartBand {
  from: number;
  to: number;
  label: string;
  fill: string;
}

/** What to draw. */
export interface LineChart {
  title: string;
  series: readonly ChartSeries[];
  bands?: readonly ChartBand[];
  xMax: number;
  yMax: number;
  /** Formats a y tick. */
  yFormat: (v: number) => string;
  width?: number;
  height?: number;
  /** "How to read this" HTML shown under the chart (already escaped). Defaults to none. */
  note?: string;
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function niceStep(range: number, target: number): number {
  const raw = range / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  return (norm >= 5 ? 5 : norm >= 2 ? 2 : 1) * mag;
}

/**
 * Renders `chart` as a `<figure>`: the title and legend as HTML (they stay
 * readable when the chart shrinks on a phone), the plot as an `<svg>` that
 * scales with its `viewBox`, then the note.
 */
export function renderLineChart(chart: LineChart): string {
  const width = chart.width ?? 480;
  const height = chart.height ?? 200;
  const m = { left: 50, right: 10, top: 16, bottom: 36 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const xMax = Math.max(chart.xMax, 1e-9);
  const yMax = Math.max(chart.yMax, 1e-9);
  const sx = (x: number) => m.left + (Math.min(Math.max(x, 0), xMax) / xMax) * w;
  const sy = (y: number) => m.top + h - (Math.min(Math.max(y, 0), yMax) / yMax) * h;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(chart.title)}">`,
  );
  for (const b of chart.bands ?? []) {
    const x0 = sx(b.from);
    const x1 = sx(b.to);
    parts.push(
      `<rect x="${x0.toFixed(1)}" y="${m.top}" width="${Math.max(0, x1 - x0).toFixed(1)}" height="${h}" fill="${b.fill}"/>`,
    );
    // A label wider than its band would run into the next one (about 5.5 units a character at 10 px).
    if (b.label.length * 5.5 + 6 <= x1 - x0) {
      parts.push(
        `<text x="${(x0 + 3).toFixed(1)}" y="${m.top + 11}" class="band">${esc(b.label)}</text>`,
      );
    }
  }
  const yStep = niceStep(yMax, 4);
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    parts.push(
      `<line x1="${m.left}" x2="${m.left + w}" y1="${sy(y).toFixed(1)}" y2="${sy(y).toFixed(1)}" class="grid"/>`,
      `<text x="${m.left - 6}" y="${(sy(y) + 4).toFixed(1)}" class="tick" text-anchor="end">${esc(chart.yFormat(y))}</text>`,
    );
  }
  const xStep = niceStep(xMax, 6);
  for (let x = 0; x <= xMax + 1e-9; x += xStep) {
    parts.push(
      `<text x="${sx(x).toFixed(1)}" y="${m.top + h + 16}" class="tick" text-anchor="middle">${Number(x.toFixed(2))}</text>`,
    );
  }
  parts.push(
    `<text x="${m.left + w / 2}" y="${height - 4}" class="tick" text-anchor="middle">seconds</text>`,
    `<rect x="${m.left}" y="${m.top}" width="${w}" height="${h}" class="frame"/>`,
  );
  for (const s of chart.series) {
    let d = '';
    let pen = false;
    for (const [x, y] of s.points) {
      if (y === undefined) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`;
      pen = true;
    }
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}><title>${esc(s.name)}</title></path>`,
    );
  }
  parts.push('</svg>');
  const legend = chart.series
    .map(
      (s) =>
        `<span class="key"><i style="border-top:3px ${s.dash ? 'dashed' : 'solid'} ${s.color}"></i>${esc(s.name)}</span>`,
    )
    .join('');
  return `<figure class="chart"><figcaption><b>${esc(chart.title)}</b><span class="legend">${legend}</span></figcaption>${parts.join('')}${chart.note ? `<p class="how">${chart.note}</p>` : ''}</figure>`;
}
