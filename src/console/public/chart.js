// uPlot (vendored from npm, served from /console/assets/) is loaded at the first chart, so the
// sign-in form never waits for it. Charts are drawn by script only: the CSP allows no inline code.
import { h } from './dom.js'

let library

function loadUplot() {
  library ??= new Promise((resolve, reject) => {
    document.head.append(h('link', { rel: 'stylesheet', href: '/console/assets/uPlot.min.css' }))
    const script = h('script', { src: '/console/assets/uPlot.iife.min.js' })
    script.addEventListener('load', () => resolve(window.uPlot))
    script.addEventListener('error', () => {
      library = undefined
      reject(new Error('the chart library could not be loaded from /console/assets/uPlot.iife.min.js'))
    })
    document.head.append(script)
  })
  return library
}

const DAY = 86_400

/**
 * A line chart of daily values into `box` (sized to its width, redrawn when that changes).
 * dates: ['2026-01-01', ...]; values: numbers; label: what the line is.
 */
export async function dailyLine(box, dates, values, label) {
  const uPlot = await loadUplot()
  const xs = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000)
  const style = getComputedStyle(document.documentElement)
  const stroke = style.getPropertyValue('--accent').trim() || '#2355c4'
  const ink = style.getPropertyValue('--muted').trim() || '#5f6b7a'
  const width = () => Math.max(200, box.clientWidth)
  const plot = new uPlot(
    {
      width: width(),
      height: 220,
      legend: { show: false },
      scales: { x: { time: true, range: xs.length === 1 ? [xs[0] - DAY, xs[0] + DAY] : undefined } },
      axes: [
        { stroke: ink, grid: { stroke: 'rgba(127,127,127,0.15)' } },
        { stroke: ink, grid: { stroke: 'rgba(127,127,127,0.15)' }, size: 70 },
      ],
      series: [{}, { label, stroke, width: 2, points: { show: xs.length < 40 } }],
    },
    [xs, values],
    box,
  )
  new ResizeObserver(() => plot.setSize({ width: width(), height: 220 })).observe(box)
  return plot
}

/**
 * Several lines of daily values on one scale into `box` (the first line in the accent colour, the
 * others fainter and dashed). lines: [{ label, values }]; options.percent: the y axis in percent.
 */
export async function dailyLines(box, dates, lines, options = {}) {
  const uPlot = await loadUplot()
  const xs = dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000)
  const style = getComputedStyle(document.documentElement)
  const accent = style.getPropertyValue('--accent').trim() || '#2355c4'
  const ink = style.getPropertyValue('--muted').trim() || '#5f6b7a'
  const height = options.height ?? 200
  const width = () => Math.max(200, box.clientWidth)
  const values = options.percent ? (_, ticks) => ticks.map((t) => `${(t * 100).toFixed(0)}%`) : undefined
  const plot = new uPlot(
    {
      width: width(),
      height,
      legend: { show: false },
      scales: { x: { time: true, range: xs.length === 1 ? [xs[0] - DAY, xs[0] + DAY] : undefined } },
      axes: [
        { stroke: ink, grid: { stroke: 'rgba(127,127,127,0.15)' } },
        { stroke: ink, grid: { stroke: 'rgba(127,127,127,0.15)' }, size: 60, values },
      ],
      series: [
        {},
        ...lines.map((line, i) => (i === 0 ? { label: line.label, stroke: accent, width: 2 } : { label: line.label, stroke: ink, width: 1.5, dash: [6, 4] })),
      ],
    },
    [xs, ...lines.map((line) => line.values)],
    box,
  )
  new ResizeObserver(() => plot.setSize({ width: width(), height })).observe(box)
  return plot
}
