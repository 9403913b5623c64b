/** What the connector takes from its surroundings, injected so tests control time and randomness. */
export interface Runtime {
  now(): number;
  sleep(ms: number): Promise<void>;
  random(): number;
}

export const systemRuntime: Runtime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
  random: () => Math.random(),
};
