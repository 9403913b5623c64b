import {Cancelled} from '../../core/errors';

/** Which waiting export gets a free slot first: the one a reader waits for, then those planned ahead. */
export enum Priority {
  Needed = 0,
  Ahead = 1,
}

interface Waiter {
  priority: Priority;
  position: number;
  grant: (slot: Slot) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

/** A slot on the service: held from an export's creation until its file has been read or dropped. */
export interface Slot {
  release(): void;
}

/** A request for a slot: the slot once granted, and a way to move the request to the front. */
export interface SlotRequest {
  slot: Promise<Slot>;
  /** The export is now the one a reader waits for; true if it is still waiting for its slot. */
  prioritize(): boolean;
  /** Grants the request a slot its holder hands over (the count does not change); false if it no longer waits. */
  takeOver(held: Slot): boolean;
}

/**
 * The exports the service generates at once, across all quests: at most `limit`, so that the
 * connector never asks more of the service than max_concurrent_exports allows. A slot is held
 * until the reader is done with the export's file (or drops it); a stream that fails releases its
 * slots as its jobs stop, so the count is never above the limit, not even briefly. Exports planned
 * ahead never take the last free slot: it is kept for an export a reader waits for, so that slots
 * held by files not yet read can never leave a reader waiting forever.
 */
export class ExportSlots {
  private active = 0;
  private order = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly limit: number) {}

  get inUse(): number {
    return this.active;
  }

  /** Asks for a slot; the promise rejects with Cancelled if the signal aborts first. */
  request(priority: Priority, signal: AbortSignal): SlotRequest {
    let waiter: Waiter | undefined;
    const slot = new Promise<Slot>((resolve, reject) => {
      if (signal.aborted) return reject(new Cancelled());
      const entry: Waiter = {
        priority,
        position: this.order++,
        grant: resolve,
        signal,
        onAbort: () => {
          const i = this.waiting.indexOf(entry);
          if (i !== -1) this.waiting.splice(i, 1);
          reject(new Cancelled());
        },
      };
      waiter = entry;
      signal.addEventListener('abort', entry.onAbort, {once: true});
      this.waiting.push(entry);
      this.next();
    });
    return {
      slot,
      prioritize: () => {
        if (!waiter || !this.waiting.includes(waiter)) return false;
        waiter.priority = Priority.Needed;
        this.next();
        return this.waiting.includes(waiter);
      },
      takeOver: (held) => {
        const i = waiter ? this.waiting.indexOf(waiter) : -1;
        if (!waiter || i === -1) return false;
        this.waiting.splice(i, 1);
        waiter.signal.removeEventListener('abort', waiter.onAbort);
        waiter.grant(held);
        return true;
      },
    };
  }

  /** A slot, once one is free (see request). */
  acquire(priority: Priority, signal: AbortSignal): Promise<Slot> {
    return this.request(priority, signal).slot;
  }

  private grant(): Slot {
    this.active++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.active--;
        this.next();
      },
    };
  }

  private next(): void {
    for (;;) {
      this.waiting.sort((a, b) => a.priority - b.priority || a.position - b.position);
      const first = this.waiting[0];
      if (!first || this.active >= this.limit) return;
      if (first.priority === Priority.Ahead && this.active >= this.limit - 1) return;
      this.waiting.shift();
      first.signal.removeEventListener('abort', first.onAbort);
      first.grant(this.grant());
    }
  }
}
