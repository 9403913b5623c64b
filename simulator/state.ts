// The mutable state shared by the request handlers and the public Simulator object.

import {TokenService} from './auth';
import {Dialect} from './dialect';
import {QuestData} from './data';
import {ExportStore} from './exports';
import {Faults} from './faults';
import {InvitationListOptions, Invitations} from './invitations';
import {ProblemFactory} from './problem';
import {HeaderDecorator, RequestRecord, Route, RouteHandler, SimulatorClock, SimulatorStats} from './types';

export interface QuestEntry {
  data: QuestData;
  invitations: Invitations;
}

export interface State {
  quests: Map<string, QuestEntry>;
  exports: ExportStore;
  tokens: TokenService;
  faults: Faults;
  problems: ProblemFactory;
  stats: SimulatorStats;
  records: RequestRecord[];
  exportDurationMs: number;
  exportMsPerThousandRows: number;
  /** Prefix of every path the API serves ('' or like '/gateway/questback'). */
  pathPrefix: string;
  /** The status 302 Location is the relative reference 'download'. */
  relativeLocation: boolean;
  dialect: Dialect;
  log: (line: string) => void;
  clock: SimulatorClock;
  /** On-demand answers by route (Simulator.on), and header decorators (Simulator.decorate). */
  handlers: Map<Route, RouteHandler>;
  decorators: HeaderDecorator[];
  /** How the invitations list answers (Simulator.setInvitationList replaces it). */
  invitationList: InvitationListOptions;
}
