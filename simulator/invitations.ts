// A few seeded invitations per quest for the cheap list endpoint (GET .../invitations), which a
// connector uses with take=0 to prove it can reach a quest.

import {deriveSeed, Prng} from './prng';

export interface Invitation {
  id: string;
  email: string;
  createdAt: string;
}

interface StoredInvitation extends Invitation {
  createdMs: number;
}

export class Invitations {
  private readonly items: StoredInvitation[];

  constructor(seed: number, questId: string, firstMs: number, lastMs: number) {
    const rng = new Prng(deriveSeed(seed, `invitations:${questId}`));
    const count = rng.range(3, 8);
    const span = Math.max(count, lastMs - firstMs);
    this.items = [];
    for (let k = 0; k < count; k++) {
      const createdMs = firstMs + Math.floor((k * span) / count);
      this.items.push({
        id: rng.uuid(),
        email: `invitee${k + 1}.${rng.hex(4)}@example.org`,
        createdAt: new Date(createdMs).toISOString(),
        createdMs,
      });
    }
  }

  /** since exclusive, until inclusive, as for exports; then paged. */
  list(since: number | undefined, until: number | undefined, skip: number, take: number): Invitation[] {
    return this.items
      .filter((i) => (since === undefined || i.createdMs > since) && (until === undefined || i.createdMs <= until))
      .slice(skip, skip + take)
      .map(({id, email, createdAt}) => ({id, email, createdAt}));
  }
}
