/* Faultline's charts, drawn with Chart.js (and its annotation plugin) from npm.
 *
 * The run page (live while a run goes on), the comparison, the schedule trends and the
 * downloadable reports all draw with these functions, from the JSON the service gives
 * (service/results/series.py, service/results/calibration_report.py). Load chart.umd.js and
 * chartjs-plugin-annotation.min.js first.
 *
 * Two things neither library does: a y-axis that keeps the fault in view (robustScale:
 * scaled to the steady seconds, not the ramp or the end-of-run burst, with a "full scale"
 * box on each page), and marker labels staggered so that none hides another (labelRows).
 */
(function (global) {
  "use strict";

  const MARKS = {
    fault_injected: {color: "#c00", label: "fault", strong: true},
    restored: {color: "#093", label: "restored", strong: true},
    cluster_noticed: {color: "#888", label: "detected"},
    client_recovered: {color: "#06c", label: "clients recovered"},
    fully_redundant: {color: "#909", label: "fully redundant"},
  };
  const COLORS = ["#06c", "#c60", "#093", "#909", "#c00", "#555", "#0aa", "#aa0"];
  const LABEL = {font: {size: 10}, padding: 3};
  const LABEL_GAP_PX = 4;  // between two labels on one row, and between rows
  const TAIL_S = 5;  // the last seconds of a run, left out of the y-scale (its end burst)
  const HEADROOM = 1.3;  // above the robust maximum: room for the marker labels

  /* Rows for marker labels (0 is the top) so that no two overlap: each label takes the first
   * row where it clears the one before it. The annotation plugin centres a label on its line
   * (kept inside the chart area) but does not avoid other labels. */
  function labelRows(chart, labels) {
    const ctx = chart.ctx, area = chart.chartArea, x = chart.scales.x;
    ctx.save();
    ctx.font = Chart.helpers.toFont(LABEL.font).string;
    const boxes = labels.map(l => {
      const width = ctx.measureText(l.text).width + 2 * LABEL.padding + LABEL_GAP_PX;
      const centre = x.getPixelForValue(l.t);
      const left = Math.min(Math.max(centre - width / 2, area.left), area.right - width);
      return {id: l.id, left: left, right: left + width};
    }).sort((a, b) => a.left - b.left);
    ctx.restore();
    const rowEnds = [], rows = {};
    boxes.forEach(b => {
      let row = rowEnds.findIndex(end => end <= b.left);
      if (row < 0) row = rowEnds.push(0) - 1;
      rowEnds[row] = b.right;
      rows[b.id] = row;
    });
    return rows;
  }

  /* Vertical lines with labels at the top, staggered so that none hides another:
   * lines = [{id, t, text, color, width, dash}] -> the annotation plugin's annotations. */
  function labelledLines(lines) {
    const rowHeight = Chart.helpers.toFont(LABEL.font).lineHeight + 2 * LABEL.padding
                      + LABEL_GAP_PX;
    const out = {};
    lines.forEach(l => {
      out[l.id] = {type: "line", xMin: l.t, xMax: l.t, borderColor: l.color,
        borderWidth: l.width, borderDash: l.dash || [],
        // "end" is the top of a vertical line; rows go down from there
        label: {display: true, content: l.text, position: "end", backgroundColor: l.color,
                font: LABEL.font, padding: LABEL.padding,
                yAdjust: c => labelRows(c.chart, lines)[l.id] * rowHeight}};
    });
    return out;
  }

  /* Vertical lines for the events that matter on a time axis (fault, restore, ...). */
  function marks(events) {
    return labelledLines((events || []).filter(e => MARKS[e.kind]).map((e, i) => {
      const style = MARKS[e.kind];
      return {id: "m" + i, t: e.t, text: style.label, color: style.color,
              width: style.strong ? 2 : 1, dash: style.strong ? [] : [4, 4]};
    }));
  }

  /* The y-axes scaled to what matters, not to a ramp or a burst: each dataset may name the
   * points that count (`robustRange`: first and last index); an axis listed in the plugin's
   * `quantiles` then ends at that quantile of them, times HEADROOM, unless `full` is set
   * (the pages' "full scale" box). Chart.js rounds the end up to a tick. */
  const robustScale = {
    id: "robustScale",
    afterDataLimits(chart, args, options) {
      const scale = args.scale, quantile = (options.quantiles || {})[scale.id];
      if (options.full || quantile === undefined) return;
      const values = [];
      chart.data.datasets.forEach((d, i) => {
        if ((d.yAxisID || "y") !== scale.id || !d.robustRange || !chart.isDatasetVisible(i)) {
          return;
        }
        const [first, last] = d.robustRange;
        d.data.slice(first, last + 1).forEach(p => { if (p.y != null) values.push(p.y); });
      });
      if (values.length < 3) return;  // too little to judge: everything
      values.sort((a, b) => a - b);
      const top = values[Math.ceil(quantile * values.length) - 1] * HEADROOM;
      if (top > 0 && top < scale.max) scale.max = Math.max(top, scale.min + 1);
    },
  };

  /* The indexes of a run's points between its steady start and its last TAIL_S seconds. */
  function steadyRange(rows, steadyT) {
    const lastT = rows.length ? rows[rows.length - 1].t : 0;
    const from = steadyT == null ? -Infinity : steadyT;
    const first = rows.findIndex(p => p.t >= from);
    let last = -1;
    rows.forEach((p, i) => { if (p.t >= from && p.t <= lastT - TAIL_S) last = i; });
    return first < 0 || last < first ? null : [first, last];
  }

  /* Show every point (true) or the robust scale (false) on these charts. */
  function setFullScale(charts, full) {
    charts.filter(chart => (chart.config.plugins || []).includes(robustScale)).forEach(chart => {
      chart.options.plugins.robustScale.full = full;
      chart.update("none");
    });
  }

  function points(rows, key, scale) {
    return (rows || []).map(p => ({x: p.t, y: p[key] == null ? null
                                               : (scale ? p[key] * scale : p[key])}));
  }

  function line(label, data, color, axis, extra) {
    return Object.assign({label: label, data: data, borderColor: color, backgroundColor: color,
                          pointRadius: 0, borderWidth: 1.5, yAxisID: axis || "y"}, extra || {});
  }

  /* Options of a chart on a time axis; `quantiles` (axis id -> quantile of the steady points)
   * gives an axis the robust scale, `full` shows everything. */
  function timeOptions(origin, annotations, y, y2, quantiles, full) {
    const scales = {
      x: {type: "linear", title: {display: true, text: "seconds from the " + origin}},
      y: {beginAtZero: true, title: {display: true, text: y}},
    };
    if (y2) {
      scales.y2 = {position: "right", beginAtZero: true, title: {display: true, text: y2},
                   grid: {drawOnChartArea: false}};
    }
    return {animation: false, parsing: true, maintainAspectRatio: false,
            interaction: {mode: "nearest", axis: "x", intersect: false},
            scales: scales, plugins: {annotation: {annotations: annotations},
                                      robustScale: {quantiles: quantiles || {}, full: !!full}}};
  }

  /* The cluster's recovery, per system: what the sampler records (service/sampler.py). */
  const RECOVERY = {
    ceph: {y: "objects", y2: "PGs", datasets: d => [
      line("degraded objects", points(d.cluster, "degraded"), "#c60", "y"),
      line("misplaced objects", points(d.cluster, "misplaced"), "#e90", "y"),
      line("PGs active+clean", points(d.cluster, "clean_pgs"), "#093", "y2"),
      line("PGs in all", points(d.cluster, "num_pgs"), "#9c9", "y2", {borderDash: [4, 4]})]},
    swift: {y: "% of copies found", y2: "partitions", datasets: d => [
      line("dispersion: object copies found %", points(d.cluster, "dispersion_pct"), "#093", "y"),
      line("handoff partitions", points(d.cluster, "handoffs"), "#c60", "y2")]},
  };

  /* Room above a chart's highest point for the marker labels (Chart.js's grace). */
  function withLabelRoom(options) {
    Object.values(options.scales).filter(s => s !== options.scales.x).forEach(s => {
      s.grace = `${Math.round((HEADROOM - 1) * 100)}%`;
    });
    return options;
  }

  /* Throughput scales to the 99th percentile of its steady seconds (a catch-up second after
   * the stall may pass it); latency to the highest steady second, the fault's included. */
  const QUANTILES = {throughput: {y: 0.99}, latency: {y: 1}};

  function runConfigs(d, kind, full) {
    const m = marks(d.events);
    const steady = {robustRange: steadyRange(d.load || [], d.steady_t)};
    const recovery = RECOVERY[kind] || {y: "", y2: null, datasets: () => []};
    return {
      throughput: {type: "line", plugins: [robustScale],
        options: timeOptions(d.origin, m, "ops/s", "errors/s", QUANTILES.throughput, full),
        // errors count the starts the open loop could not issue (a stall), drawn on their own
        data: {datasets: [line("ops/s", points(d.load, "ops"), "#06c", "y", steady),
                          line("errors/s", points(d.load, "errors"), "#c00", "y2"),
                          line("not started/s", points(d.load, "not_started"), "#e90", "y2",
                               {borderDash: [4, 4]})]}},
      latency: {type: "line", plugins: [robustScale],
        options: timeOptions(d.origin, m, "latency, ms", null, QUANTILES.latency, full),
        data: {datasets: [
          line("p50 latency ms", points(d.load, "p50_ms"), "#06c", "y", steady),
          // the band between the two lines: half the operations took that long or less, and
          // 99 in 100 took at most the upper edge
          line("p99 latency ms", points(d.load, "p99_ms"), "#555", "y",
               Object.assign({fill: "-1", backgroundColor: "rgba(85, 85, 85, 0.2)"}, steady))]}},
      cluster: {type: "line", options: withLabelRoom(
        timeOptions(d.origin, m, recovery.y, recovery.y2)),
        data: {datasets: recovery.datasets(d)}},
    };
  }

  /* The three charts of a run: {throughput, latency, cluster} canvas ids -> Chart. */
  function drawRun(ids, data, kind, full) {
    const configs = runConfigs(data, kind, full);
    const charts = {};
    Object.keys(ids).forEach(name => {
      const canvas = document.getElementById(ids[name]);
      charts[name] = new Chart(canvas, configs[name]);
      canvas.dataset.ready = "1";
    });
    return charts;
  }

  /* Redraw a run's charts with newer data (the live page). */
  function updateRun(charts, data, kind, full) {
    const configs = runConfigs(data, kind, full);
    Object.keys(charts).forEach(name => {
      charts[name].data = configs[name].data;
      charts[name].options = configs[name].options;
      charts[name].update("none");
    });
  }

  /* Runs overlaid, each from its own fault: series = [{label}], all = their series JSON. */
  function overlay(canvas, series, all, full) {
    const lines = [{id: "fault", t: 0, text: "fault", color: "#c00", width: 2}];
    const datasets = all.map((data, i) => {
      const color = COLORS[i % COLORS.length];
      data.events.filter(e => e.kind === "restored").forEach((e, j) => {
        lines.push({id: `restored${i}_${j}`, t: e.t, text: `run ${data.run_id} restored`,
                    color: color, width: 1, dash: [6, 4]});
      });
      const from = data.origin === "fault" ? "" : " (no fault: from load start)";
      return line(series[i].label + from, points(data.load, "ops"), color, "y",
                  {robustRange: steadyRange(data.load, data.steady_t)});
    });
    const options = timeOptions("fault", labelledLines(lines), "ops/s", null,
                                QUANTILES.throughput, full);
    const chart = new Chart(canvas, {type: "line", data: {datasets: datasets}, options: options,
                                     plugins: [robustScale]});
    canvas.dataset.ready = "1";
    return chart;
  }

  /* One judged figure of a schedule's series, night after night; flagged nights in red. */
  function trend(canvas, figure, nights) {
    const scale = figure.unit === "%" ? 100 : 1;
    const flagged = n => n.verdict === "failure" || n.flagged_figures.includes(figure.key);
    const annotations = {};
    nights.forEach((n, i) => {
      if (n.verdict === "regression" || n.verdict === "failure") {
        annotations["night" + i] = {type: "box", xMin: i - 0.5, xMax: i + 0.5,
          backgroundColor: flagged(n) ? "rgba(204, 0, 0, 0.15)" : "rgba(204, 102, 0, 0.07)",
          borderWidth: 0};
      }
    });
    const unit = {"%": " (%)", "s": " (s)", "": ""}[figure.unit];
    const chart = new Chart(canvas, {type: "line",
      data: {labels: nights.map(n => n.label), datasets: [{
        label: figure.label + unit, borderColor: "#06c", backgroundColor: "#06c",
        data: nights.map(n => n.values[figure.key] == null ? null
                                                           : n.values[figure.key] * scale),
        pointRadius: nights.map(n => flagged(n) ? 6 : 3),
        pointBackgroundColor: nights.map(n => flagged(n) ? "#c00" : "#06c"),
        spanGaps: true}]},
      options: {animation: false, maintainAspectRatio: false,
        scales: {y: {beginAtZero: true, title: {display: true, text: figure.label + unit}}},
        plugins: {annotation: {annotations: annotations}}}});
    canvas.dataset.ready = "1";
    return chart;
  }

  /* A calibration: throughput against p50 and p99 (one point per stage, the knee ringed and
   * marked), and each stage's response-time CDF on a log latency axis, where a tail shows.
   * The curve's latency axis ends near the stage after the knee: past it latency explodes
   * and would flatten everything before (`full` shows it all). */
  function calibration(curveCanvas, cdfCanvas, d, full) {
    const knee = s => s.in_flight === d.knee_in_flight;
    const kneeIndex = d.stages.findIndex(knee);
    const lastScaled = kneeIndex < 0 ? null
                                     : d.stages[Math.min(kneeIndex + 1, d.stages.length - 1)];
    const curvePoints = key => d.stages.filter(s => s[key] != null).map(
      s => ({x: s.ops_s, y: s[key], in_flight: s.in_flight}));
    const upToKnee = rows => ({robustRange: lastScaled === null ? null
      : [0, rows.findLastIndex(p => p.in_flight <= lastScaled.in_flight)]});
    const p99 = curvePoints("p99_ms"), p50 = curvePoints("p50_ms");
    const tooltip = {callbacks: {label: c => `${c.dataset.label}: ${c.raw.y} ms at ` +
                                             `${c.raw.x} ops/s, ${c.raw.in_flight} in flight`}};
    const kneeLine = kneeIndex < 0 || d.capacity_ops == null ? {} : labelledLines([{id: "knee", t: d.capacity_ops,
      text: `knee: ${d.knee_in_flight} in flight, ${d.generator_bound ? "at least " : ""}` +
            `${d.capacity_ops.toFixed(1)} ops/s`,
      color: "#c60", width: 1, dash: [4, 4]}]);
    const curve = new Chart(curveCanvas, {type: "line", plugins: [robustScale], data: {datasets: [
        line("p99 ms", p99, "#c60", "y", Object.assign(
          {pointRadius: p99.map(p => p.in_flight === d.knee_in_flight ? 7 : 3)}, upToKnee(p99))),
        line("p50 ms", p50, "#06c", "y", Object.assign({pointRadius: 3}, upToKnee(p50)))]},
      options: {animation: false, maintainAspectRatio: false,
        scales: {x: {type: "linear", title: {display: true, text: "throughput, ops/s"}},
                 y: {beginAtZero: true, title: {display: true, text: "latency, ms"}}},
        plugins: {tooltip: tooltip, annotation: {annotations: kneeLine},
                  robustScale: {quantiles: {y: 1}, full: !!full}}}});
    const cdf = new Chart(cdfCanvas, {type: "line", data: {datasets: d.stages
        .filter(s => s.cdf.length)
        .map((s, i) => line(`${s.in_flight} in flight` + (knee(s) ? " (knee)" : ""),
                            s.cdf.map(p => ({x: p.ms, y: p.pct})), COLORS[i % COLORS.length],
                            "y", {borderWidth: knee(s) ? 3 : 1.5}))},
      options: {animation: false, maintainAspectRatio: false,
        scales: {x: {type: "logarithmic", title: {display: true, text: "latency, ms"}},
                 y: {min: 0, max: 100, title: {display: true, text: "% of operations"}}}}});
    curveCanvas.dataset.ready = "1";
    cdfCanvas.dataset.ready = "1";
    return {curve: curve, cdf: cdf};
  }

  /* The recovery-profile study: one point per group of runs (its settings), at the medians
   * of its recovery's length (x) and of the client throughput kept during it (y), with the
   * trials' range drawn as a cross of bars (service/results/recovery_study.py). */
  function recoveryStudy(canvas, groups) {
    const datasets = [];
    groups.forEach((g, i) => {
      const x = g.figures.recovery_s, y = g.figures.recovery_ops_ratio;
      if (!x || !y) return;  // no recovery measured: said in the table
      const color = COLORS[i % COLORS.length];
      datasets.push({type: "scatter", label: `${g.label} (${x.n} runs)`, data: [
        {x: x.median, y: y.median * 100}], backgroundColor: color, borderColor: color,
        pointRadius: 6, pointHoverRadius: 8});
      const bar = (points) => ({type: "line", data: points, borderColor: color,
        borderWidth: 2, pointRadius: 0, showLine: true, fill: false, label: "",
        recoveryRange: g.label});
      datasets.push(bar([{x: x.low, y: y.median * 100}, {x: x.high, y: y.median * 100}]));
      datasets.push(bar([{x: x.median, y: y.low * 100}, {x: x.median, y: y.high * 100}]));
    });
    return new Chart(canvas, {type: "scatter", data: {datasets: datasets}, options: {
      animation: false, maintainAspectRatio: false, parsing: false,
      scales: {
        x: {type: "linear", title: {display: true,
              text: "recovery: from recovery at work to full redundancy, s"}},
        y: {type: "linear", title: {display: true,
              text: "client throughput during recovery, % of baseline"}},
      },
      plugins: {legend: {labels: {filter: item => item.text !== ""}}},
    }});
  }

  global.Faultline = {marks: marks, drawRun: drawRun, updateRun: updateRun, overlay: overlay,
                      trend: trend, calibration: calibration, setFullScale: setFullScale,
                      recoveryStudy: recoveryStudy};
})(window);
