/**
 * Work spread over a few lanes that each do one thing at a time (two DuckDB connections of one
 * instance, say: each runs one statement at a time, the two at once). Items are taken in their
 * order by whichever lane is free; results come back in the items' order, never in the order they
 * finished, so what is built from them does not depend on timing.
 */

/**
 * Runs `fn` on every item, at most one item per lane at a time, lanes taking the next item in
 * order when free. Returns the results in the order of `items`. When an item fails, no lane
 * starts another; once the items under way have settled, the error of the failed item that comes
 * first in `items` is thrown (the one a single lane would have thrown, when items fail on their
 * own account). Throws RangeError when `lanes` is empty.
 */
export async function mapOnLanes<T, L, R>(items: readonly T[], lanes: readonly L[], fn: (item: T, lane: L, index: number) => Promise<R>): Promise<R[]> {
  if (lanes.length === 0) throw new RangeError('mapOnLanes needs at least one lane');
  const results: R[] = new Array<R>(items.length);
  const failures = new Map<number, unknown>();
  let next = 0;
  const drive = async (lane: L): Promise<void> => {
    while (next < items.length && failures.size === 0) {
      const i = next++;
      try {
        results[i] = await fn(items[i], lane, i);
      } catch (e) {
        failures.set(i, e);
      }
    }
  };
  await Promise.all(lanes.map(drive));
  if (failures.size) throw failures.get(Math.min(...failures.keys()));
  return results;
}
