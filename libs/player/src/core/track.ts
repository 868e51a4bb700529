/**
 * track=1 in a SCORM package: the learner's answers also go to this service's tracking run, whose learner
 * view names ranking items and match sides with the server's keyed ids, not the package's. The same text
 * maps one to the other; grading treats items of equal text as interchangeable, so the server's verdict
 * equals the package's.
 */
import type { PlayerBlock, PlayerCourse, PlayerEvent } from './types.js';

type Item = { id: string; text: string };
const items = (v: unknown, textKey = 'text'): Item[] =>
  Array.isArray(v)
    ? v.map((x: Record<string, unknown>) => ({ id: String(x?.id ?? ''), text: String(x?.[textKey] ?? '') }))
    : [];

/** Local id → server id, pairing items of the same text in order. */
function idMap(local: Item[], server: Item[]): Map<string, string> {
  const free = [...server];
  const out = new Map<string, string>();
  for (const it of local) {
    const i = free.findIndex((s) => s.text.trim() === it.text.trim());
    if (i === -1) continue;
    out.set(it.id, free[i].id);
    free.splice(i, 1);
  }
  return out;
}

export function serverAnswer(local: PlayerBlock, server: PlayerBlock | undefined, answer: unknown): unknown {
  if (!server) return answer;
  if (local.type === 'ranking' && Array.isArray(answer)) {
    const map = idMap(items(local.items), items(server.items));
    return answer.map((id) => (typeof id === 'string' ? (map.get(id) ?? id) : id));
  }
  if (local.type === 'match' && typeof answer === 'object' && answer !== null && !Array.isArray(answer)) {
    const map = idMap(items(local.right), items(server.right));
    return Object.fromEntries(
      Object.entries(answer).map(([l, r]) => [l, typeof r === 'string' ? (map.get(r) ?? r) : r]),
    );
  }
  return answer;
}

/** The event as the tracking run expects it; `learnerCourse` is what this page renders. */
export function serverEvent(
  event: PlayerEvent,
  learnerCourse: PlayerCourse,
  served: PlayerCourse,
): PlayerEvent {
  if (event.type !== 'answer') return event;
  const find = (c: PlayerCourse) => {
    for (const s of c.screens) for (const b of s.blocks) if (b.id === event.blockId) return b;
    return undefined;
  };
  const local = find(learnerCourse);
  return local ? { ...event, answer: serverAnswer(local, find(served), event.answer) } : event;
}
