// The JavaScript half of the condense handler bridge (crates/napi/src/condense.rs evaluates this
// expression once per JavaScript environment and keeps the function).
//
// Given the options of a condense call and an `onAbort` callback, it strips the options to plain
// data, calls `onAbort` when `options.signal` aborts (at once if it already has), and wraps the
// extension's `apiHandler` so that each call resolves, never rejects, with plain data:
//   stream(request) -> { chunks, error?, aborted? }   the handler's text and usage chunks
//   count(content)  -> number                        the handler's count, -1 when it has none
//   fold()          -> string[] | null               `options.foldFileContext()`'s sections
(function (options, onAbort) {
  options = options || {};
  const { apiHandler, signal, rooIgnoreController, foldFileContext, ...data } = options;
  const out = { data };
  const hasSignal = signal && typeof signal.addEventListener === 'function';
  if (hasSignal) {
    if (signal.aborted) onAbort(); else signal.addEventListener('abort', () => onAbort(), { once: true });
  }
  const handler = apiHandler;
  if (!handler || typeof handler.createMessage !== 'function') return out;
  out.supportsImages = true;
  if (typeof handler.getModel === 'function') {
    try { const m = handler.getModel(); out.supportsImages = !!(m && m.info && m.info.supportsImages); } catch (e) {}
  }
  const ABORT = {};
  const aborted = new Promise((resolve) => {
    if (!hasSignal) return;
    if (signal.aborted) resolve(ABORT); else signal.addEventListener('abort', () => resolve(ABORT), { once: true });
  });
  const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  out.stream = async (req) => {
    const chunks = [];
    let it;
    try {
      const src = handler.createMessage(req.systemPrompt, req.messages, req.metadata);
      it = src && typeof src[Symbol.asyncIterator] === 'function' ? src[Symbol.asyncIterator]() : src[Symbol.iterator]();
      for (;;) {
        const step = await Promise.race([it.next(), aborted]);
        if (step === ABORT) {
          try { if (typeof it.return === 'function') it.return(); } catch (e) {}
          return { chunks, aborted: true };
        }
        if (step.done) break;
        const c = step.value;
        if (!c) continue;
        if (c.type === 'text') chunks.push({ type: 'text', text: String(c.text ?? '') });
        else if (c.type === 'usage') {
          const u = { type: 'usage', inputTokens: num(c.inputTokens), outputTokens: num(c.outputTokens) };
          if (typeof c.cacheWriteTokens === 'number') u.cacheWriteTokens = c.cacheWriteTokens;
          if (typeof c.cacheReadTokens === 'number') u.cacheReadTokens = c.cacheReadTokens;
          if (typeof c.totalCost === 'number') u.totalCost = c.totalCost;
          chunks.push(u);
        }
      }
      return { chunks };
    } catch (e) {
      return { chunks, error: e && typeof e.message === 'string' ? e.message : String(e) };
    }
  };
  if (typeof foldFileContext === 'function') {
    out.fold = async () => {
      try {
        const sections = await foldFileContext();
        return Array.isArray(sections) ? sections.filter((s) => typeof s === 'string') : null;
      } catch (e) {
        return null;
      }
    };
  }
  if (typeof handler.countTokens === 'function' && options.useHandlerCountTokens !== false) {
    out.count = async (content) => {
      try {
        const n = await handler.countTokens(content);
        return typeof n === 'number' && Number.isFinite(n) ? n : -1;
      } catch (e) {
        return -1;
      }
    };
  }
  return out;
})
