/** The compat layer's mode: `legacy` (default, bit for bit) or `fixed` (same shapes, correct values). */
export type CompatMode = 'legacy' | 'fixed'
/** The mode in force: `setMode()`'s choice, else `ROO_STATE_COMPAT_MODE`, else `legacy`. */
export declare function getMode(): CompatMode
/** Chooses the mode for every compat module; `null` returns to the environment variable. */
export declare function setMode(mode: CompatMode | null): void
