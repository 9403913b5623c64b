import {Runtime} from '../../src/core/runtime';
import {SimulatorClock} from '../../simulator';
import {prng} from './fake-api';

/**
 * Before the clock jumps, the event loop must turn this often, and this much real time must pass,
 * with nothing held and nothing happening. The turns let I/O already under way show (a request
 * written reaches the server within a turn or two); the time lets short real timers run first (an
 * HTTP client's setTimeout(0) before a retry): a timer due runs before the turn that would jump.
 */
const QUIET_TURNS = 5;
const QUIET_MS = 10;
/**
 * A jump goes to the earliest wait, or further to the last of the waits due within this much after
 * it, and ends them all: a hundred answers due a few milliseconds apart take one jump, not a hundred.
 * No wait ends before its time.
 */
const GROUP_MS = 50;

interface Timer {
  due: number;
  order: number;
  fire(): void;
}

/**
 * A virtual clock for one test, shared by the simulator (its clock) and the connector (its runtime).
 * It runs with real time, and whenever neither side is at work it jumps to the next wait due: the
 * simulator says when it works (answering a request, writing an export file) through `hold`, and
 * the event loop must be quiet a while (QUIET_TURNS, QUIET_MS) with nothing held. So status
 * polls, retries, 429 and 409 waits and the simulator's latency take no real time, while real work
 * is never jumped over, however slowly a busy machine does it: the clock follows events, not the
 * wall. Waits running side by side overlap as in real time (a jump ends the earliest, and those due
 * within GROUP_MS of it). While nothing waits on it, it is the real clock: a bin/main process may run
 * against a simulator on it.
 */
export class TestClock implements Runtime, SimulatorClock {
  private offset = 0;
  private order = 0;
  private readonly timers: Timer[] = [];
  private holds = 0;
  private ended = 0;
  /** Counts what happens (a hold taken or given back, a wait begun or ended): the loop is quiet while it stays. */
  private activity = 0;
  /** Real time of the last activity. */
  private activeAt = Date.now();
  private realTimer: NodeJS.Timeout | undefined;
  private watching = false;
  private readonly rand: () => number;

  constructor(seed = 1) {
    this.rand = prng(seed);
  }

  /** Time skipped by jumps so far, in ms. */
  get skippedMs(): number {
    return this.offset;
  }

  /** Waits that ran their full time so far (not ended early by their signal). */
  get waitsEnded(): number {
    return this.ended;
  }

  readonly now = (): number => Date.now() + this.offset;

  readonly random = (): number => this.rand();

  readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const timer: Timer = {
        due: this.now() + Math.max(0, ms),
        order: this.order++,
        fire: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const i = this.timers.indexOf(timer);
        if (i !== -1) this.timers.splice(i, 1);
        this.changed();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, {once: true});
      this.timers.push(timer);
      this.timers.sort((a, b) => a.due - b.due || a.order - b.order);
      this.changed();
    });
  };

  readonly hold = (): (() => void) => {
    this.holds++;
    this.changed();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.holds--;
      this.changed();
    };
  };

  private changed(): void {
    this.activity++;
    this.activeAt = Date.now();
    if (this.realTimer) clearTimeout(this.realTimer);
    this.realTimer = undefined;
    const first = this.timers[0];
    if (!first) return;
    // Real time runs too: the earliest wait ends when its time has come, jump or no jump.
    this.realTimer = setTimeout(() => this.fireDue(), Math.max(0, first.due - this.now()));
    this.realTimer.unref();
    if (this.holds === 0) this.watch();
  }

  /** Jumps to the earliest wait once the loop has been quiet long enough (QUIET_TURNS, QUIET_MS) with nothing held. */
  private watch(): void {
    if (this.watching) return;
    this.watching = true;
    let seen = this.activity;
    let quiet = 0;
    const turn = (): void => {
      if (this.holds > 0 || this.timers.length === 0) {
        this.watching = false;
        return;
      }
      if (this.activity !== seen) {
        seen = this.activity;
        quiet = 0;
      } else quiet++;
      const waited = Date.now() - this.activeAt;
      if (quiet >= QUIET_TURNS && waited >= QUIET_MS) {
        this.watching = false;
        const until = this.timers[0].due + GROUP_MS;
        const last = this.timers.filter((t) => t.due <= until).reduce((due, t) => Math.max(due, t.due), 0);
        this.offset += Math.max(0, last - this.now());
        this.fireDue();
      } else if (quiet >= QUIET_TURNS) {
        setTimeout(turn, QUIET_MS - waited).unref();
      } else {
        setImmediate(turn);
      }
    };
    setImmediate(turn);
  }

  private fireDue(): void {
    const now = this.now();
    const due: Timer[] = [];
    while (this.timers.length && this.timers[0].due <= now) due.push(this.timers.shift() as Timer);
    this.ended += due.length;
    for (const timer of due) timer.fire();
    this.changed();
  }
}
