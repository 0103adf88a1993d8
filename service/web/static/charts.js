/* Faultline's charts, drawn with Chart.js (and its annotation plugin) from npm.
 *
 * The run page (live while a run goes on), the comparison, the schedule trends and the
 * downloadable reports all draw with these functions, from the JSON the service gives
 * (service/run_series.py, service/schedule_series.py). Load chart.umd.js and
 * chartjs-plugin-annotation.min.js first.
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

  /* Vertical lines for the events that matter on a time axis (fault, restore, ...). */
  function marks(events) {
    const out = {};
    (events || []).forEach((e, i) => {
      const style = MARKS[e.kind];
      if (!style) return;
      out["m" + i] = {type: "line", xMin: e.t, xMax: e.t, borderColor: style.color,
        borderWidth: style.strong ? 2 : 1, borderDash: style.strong ? [] : [4, 4],
        label: {display: true, content: style.label, position: style.strong ? "start" : "end",
                backgroundColor: style.color, font: {size: 10}}};
    });
    return out;
  }

  function points(rows, key, scale) {
    return (rows || []).map(p => ({x: p.t, y: p[key] == null ? null
                                               : (scale ? p[key] * scale : p[key])}));
  }

  function line(label, data, color, axis, extra) {
    return Object.assign({label: label, data: data, borderColor: color, backgroundColor: color,
                          pointRadius: 0, borderWidth: 1.5, yAxisID: axis || "y"}, extra || {});
  }

  function timeOptions(origin, annotations, y, y2) {
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
            scales: scales, plugins: {annotation: {annotations: annotations}}};
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

  function runConfigs(d, kind) {
    const m = marks(d.events);
    const recovery = RECOVERY[kind] || {y: "", y2: null, datasets: () => []};
    return {
      throughput: {type: "line", options: timeOptions(d.origin, m, "ops/s", "errors/s"),
        data: {datasets: [line("ops/s", points(d.load, "ops"), "#06c", "y"),
                          line("errors/s", points(d.load, "errors"), "#c00", "y2")]}},
      latency: {type: "line", options: timeOptions(d.origin, m, "p99 latency, ms"),
        data: {datasets: [line("p99 latency ms", points(d.load, "p99_ms"), "#555", "y")]}},
      cluster: {type: "line", options: timeOptions(d.origin, m, recovery.y, recovery.y2),
        data: {datasets: recovery.datasets(d)}},
    };
  }

  /* The three charts of a run: {throughput, latency, cluster} canvas ids -> Chart. */
  function drawRun(ids, data, kind) {
    const configs = runConfigs(data, kind);
    const charts = {};
    Object.keys(ids).forEach(name => {
      const canvas = document.getElementById(ids[name]);
      charts[name] = new Chart(canvas, configs[name]);
      canvas.dataset.ready = "1";
    });
    return charts;
  }

  /* Redraw a run's charts with newer data (the live page). */
  function updateRun(charts, data, kind) {
    const configs = runConfigs(data, kind);
    Object.keys(charts).forEach(name => {
      charts[name].data = configs[name].data;
      charts[name].options = configs[name].options;
      charts[name].update("none");
    });
  }

  /* Runs overlaid, each from its own fault: series = [{label}], all = their series JSON. */
  function overlay(canvas, series, all) {
    const annotations = {fault: {type: "line", xMin: 0, xMax: 0, borderColor: "#c00",
      borderWidth: 2, label: {display: true, content: "fault", position: "start"}}};
    const datasets = all.map((data, i) => {
      const color = COLORS[i % COLORS.length];
      data.events.filter(e => e.kind === "restored").forEach((e, j) => {
        annotations[`restored${i}_${j}`] = {type: "line", xMin: e.t, xMax: e.t,
          borderColor: color, borderWidth: 1, borderDash: [6, 4],
          label: {display: true, content: `run ${data.run_id} restored`, position: "end"}};
      });
      const from = data.origin === "fault" ? "" : " (no fault: from load start)";
      return line(series[i].label + from, points(data.load, "ops"), color, "y");
    });
    const options = timeOptions("fault", annotations, "ops/s");
    const chart = new Chart(canvas, {type: "line", data: {datasets: datasets}, options: options});
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

  /* A calibration: throughput against p50 and p99 (one point per stage, the knee ringed),
   * and each stage's response-time CDF on a log latency axis, where a tail shows. */
  function calibration(curveCanvas, cdfCanvas, d) {
    const knee = s => s.in_flight === d.knee_in_flight;
    const curvePoints = key => d.stages.filter(s => s[key] != null).map(
      s => ({x: s.ops_s, y: s[key], in_flight: s.in_flight}));
    const tooltip = {callbacks: {label: c => `${c.dataset.label}: ${c.raw.y} ms at ` +
                                             `${c.raw.x} ops/s, ${c.raw.in_flight} in flight`}};
    const curve = new Chart(curveCanvas, {type: "line", data: {datasets: [
        line("p99 ms", curvePoints("p99_ms"), "#c60", "y", {pointRadius: d.stages.map(
          s => knee(s) ? 7 : 3)}),
        line("p50 ms", curvePoints("p50_ms"), "#06c", "y", {pointRadius: 3})]},
      options: {animation: false, maintainAspectRatio: false,
        scales: {x: {type: "linear", title: {display: true, text: "throughput, ops/s"}},
                 y: {beginAtZero: true, title: {display: true, text: "latency, ms"}}},
        plugins: {tooltip: tooltip}}});
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

  global.Faultline = {marks: marks, drawRun: drawRun, updateRun: updateRun, overlay: overlay,
                      trend: trend, calibration: calibration};
})(window);
