package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The znode paths one client knows to exist: the levels above the lock paths whose missing parents
 * it created ({@code /locks}, {@code /locks/orders}, ... for {@code /locks/orders/42}), so that a
 * cold key below a known level creates only the levels under it. A hint, never trusted for a
 * grant: ZooKeeper may have reaped a level since (an empty container), and the create that relied
 * on it is then refused and sent again with every level created.
 *
 * <p>Bounded: at most {@code capacity} paths, the least recently used forgotten first. Thread-safe;
 * used only when a create was refused for a missing parent, never on the path of a key whose
 * znodes exist.
 */
final class KnownPaths {

	private final int capacity;

	private final Map<String, Boolean> paths;

	/**
	 * @param capacity how many paths to remember, at least 1
	 */
	KnownPaths(int capacity) {
		this.capacity = Math.max(1, capacity);
		this.paths = new LinkedHashMap<>(16, 0.75f, true) {

			@Override
			protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
				return size() > KnownPaths.this.capacity;
			}

		};
	}

	/**
	 * Remember that every level above a path exists (its parent, the parent's parent, up to the top
	 * level), as a child created in the path proves. The path itself is not remembered: it is a lock
	 * path's own queue, one per key.
	 * @param path a path a child was just created in
	 */
	synchronized void addLevelsAbove(String path) {
		List<String> levels = levels(path);
		for (int i = 0; i < levels.size() - 1; i++) {
			this.paths.put(levels.get(i), Boolean.TRUE);
		}
	}

	/**
	 * Forget a path and every level above it.
	 * @param path the path
	 */
	synchronized void forgetLevelsOf(String path) {
		for (String level : levels(path)) {
			this.paths.remove(level);
		}
	}

	/**
	 * The levels of a missing path to create, top down: those below the deepest level above it known
	 * to exist (every level when none is known), the path itself last.
	 * @param path a path ZooKeeper said is missing
	 * @return the levels, the path itself included
	 */
	synchronized List<String> missingLevels(String path) {
		List<String> levels = levels(path);
		this.paths.remove(path);
		int deepestKnown = -1;
		for (int i = levels.size() - 2; i >= 0; i--) {
			if (this.paths.get(levels.get(i)) != null) {
				deepestKnown = i;
				break;
			}
		}
		return levels.subList(deepestKnown + 1, levels.size());
	}

	/** How many paths are remembered. */
	synchronized int size() {
		return this.paths.size();
	}

	/** {@code /a/b/c} as {@code /a}, {@code /a/b}, {@code /a/b/c}; none for the root. */
	private static List<String> levels(String path) {
		List<String> levels = new ArrayList<>();
		for (int slash = path.indexOf('/', 1); slash > 0; slash = path.indexOf('/', slash + 1)) {
			levels.add(path.substring(0, slash));
		}
		if (path.length() > 1) {
			levels.add(path);
		}
		return levels;
	}

}
