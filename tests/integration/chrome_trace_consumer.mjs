// Loads a Chrome trace JSON file with the Chrome DevTools trace engine (an independent, real
// consumer of the format) and prints what it understood: processes, threads, names, entries.
// Usage: node chrome_trace_consumer.mjs TRACE_ENGINE_JS TRACE.json
import fs from 'node:fs';

const [enginePath, tracePath] = process.argv.slice(2);
const Trace = await import(enginePath);
const json = JSON.parse(fs.readFileSync(tracePath, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(json.traceEvents);
const data = model.parsedTrace().data;

const processes = [];
for (const [pid, proc] of data.Renderer.processes) {
  const threads = [];
  for (const [tid, thread] of proc.threads)
    threads.push({tid, name: thread.name ?? null, entries: thread.entries.length});
  processes.push({pid, threads});
}
console.log(JSON.stringify({
  processes,
  bounds_us: {min: data.Meta.traceBounds.min, max: data.Meta.traceBounds.max},
}));
