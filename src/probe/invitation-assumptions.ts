// What the invitations stream assumes about GET /v1/quests/{questId}/invitations, where the vendor's
// docs leave it open (the answer's wrapper, the order, the filter's timestamp, take up to 1000), one
// entry per verdict of the probe (invitation-verdicts.ts).

const MAINTAINERS = "send this report to the connector's maintainers";

export const INVITATION_ASSUMPTIONS = [
  {
    id: 'invitations.wrapper',
    topic: 'Invitations',
    assumption:
      'A page of the invitations list is a JSON array of invitations, or an object holding exactly one array of them.',
    ifContradicted: `The invitations stream fails with an error naming the answer's shape (it never reports success with no invitations). Deselect the invitations stream and ${MAINTAINERS}.`,
  },
  {
    id: 'invitations.take',
    topic: 'Invitations',
    assumption: 'The list returns up to `take` items per page, up to 1000 (the documented maximum).',
    ifContradicted:
      'Nothing is lost: the connector reads on until a page brings nothing new, whatever the page size. A sync takes one request per page the service gives (pages overlap by a quarter at most), so more requests than one per 950 invitations.',
  },
  {
    id: 'invitations.order',
    topic: 'Invitations',
    assumption:
      'The list keeps one order from request to request (any order): skip-based pages then neither repeat nor leave out invitations while nothing changes.',
    ifContradicted: `Pages that repeat invitations cost nothing (each is emitted once per sync). An order that moves while the list is read (by the last change of status, say) is covered by pages overlapping by 50 and, for a larger move, a second read; if the second read moved too, a warning says some invitations may be missing from that sync. If that warning comes in every sync, ${MAINTAINERS}.`,
  },
  {
    id: 'invitations.filter-field',
    topic: 'Invitations',
    assumption:
      "`since`/`until` on the invitations list select by `addedAt` (the seed's 'created'); the connector reads the list whole, so this matters only for what the report shows.",
    ifContradicted:
      'Nothing to change: the invitations stream reads every invitation in every sync and uses no time filter. The filter selecting by last change is why an incremental read would not be reliable.',
  },
  {
    id: 'invitations.statuses-change',
    topic: 'Invitations',
    assumption:
      '`sent`, `replied` and `optedOut` change after an invitation is added: the stream is full refresh only, so every sync has the current statuses.',
    ifContradicted: 'Nothing to change: a full refresh is right either way, only more than needed.',
  },
  {
    id: 'invitations.model',
    topic: 'Invitations',
    assumption:
      "Invitations carry the documented model's required fields (invitationId, questId, addedAt, distributionEnabled, languageCode, optedOut, origin, replied, sent); other fields are kept under `extra_fields`.",
    ifContradicted: `A missing field is null in every record; an invitation without invitationId fails the stream. ${MAINTAINERS[0].toUpperCase()}${MAINTAINERS.slice(1)}.`,
  },
] as const;
