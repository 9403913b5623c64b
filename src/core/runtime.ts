/** What the connector takes from its surroundings, injected so tests control time and randomness. */
export interface Runtime {
  now(): number;
  /** Waits ms; rejects with the signal's reason as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
  /**
   * Work under way off the event loop (a decompression on another thread) that a virtual clock must
   * not jump over; given back by calling the function returned. The system clock needs none.
   */
  hold?(): () => void;
}

/** Sleeps on a timer that keeps the process alive (a sync waiting between polls must not exit) and ends early when the signal aborts. */
function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms)
    );
    signal?.addEventListener('abort', onAbort, {once: true});
  });
}

export const systemRuntime: Runtime = {
  now: () => Date.now(),
  sleep: abortableSleep,
  random: () => Math.random(),
};
