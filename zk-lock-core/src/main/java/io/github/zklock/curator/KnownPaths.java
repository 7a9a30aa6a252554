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
 * <p>A path this client created and has not created a child in yet (a semaphore's path, created
 * with its number of permits) is known to have no child: the semaphore's {@code locks} and
 * {@code leases} are then created before the first create below them, none refused.
 *
 * <p>Bounded: at most {@code capacity} paths, the least recently used forgotten first. Thread-safe;
 * used only when a create was refused for a missing parent or a path was just created, never on the
 * path of a key whose znodes exist but for one volatile read.
 */
final class KnownPaths {

	private final int capacity;

	/** For each path remembered: whether it was created by this client and has had no child since. */
	private final Map<String, Boolean> paths;

	/** How many paths remembered this client created and has not created a child in since. */
	private int empty;

	/** Whether {@link #empty} is not 0: read without the monitor. */
	private volatile boolean anyEmpty;

	/**
	 * @param capacity how many paths to remember, at least 1
	 */
	KnownPaths(int capacity) {
		this.capacity = Math.max(1, capacity);
		this.paths = new LinkedHashMap<>(16, 0.75f, true) {

			@Override
			protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
				boolean remove = size() > KnownPaths.this.capacity;
				if (remove && eldest.getValue() == Boolean.FALSE) {
					emptied(-1);
				}
				return remove;
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
			put(levels.get(i), Boolean.TRUE);
		}
	}

	/**
	 * Remember a path this client has just created, and the levels above it: until a child is
	 * created in it, its children are known to be missing.
	 * @param path the created path
	 */
	synchronized void addEmpty(String path) {
		addLevelsAbove(path);
		put(path, Boolean.FALSE);
	}

	/**
	 * Return whether the grandparent of a znode about to be created (the semaphore's path of a
	 * {@code locks/lock-} create) was created by this client ({@link #addEmpty}) and has had no
	 * child created since, and from now on count it as having one.
	 * @param znode the znode about to be created
	 * @return whether its grandparent had no child, so its parent is missing
	 */
	boolean takeEmptyGrandparent(String znode) {
		if (!this.anyEmpty) {
			// The one read on the path of a key whose znodes exist: no lock is taken.
			return false;
		}
		int parentEnd = znode.lastIndexOf('/');
		int grandparentEnd = (parentEnd > 0) ? znode.lastIndexOf('/', parentEnd - 1) : -1;
		if (grandparentEnd <= 0) {
			return false;
		}
		String path = znode.substring(0, grandparentEnd);
		synchronized (this) {
			boolean empty = this.paths.get(path) == Boolean.FALSE;
			if (empty) {
				put(path, Boolean.TRUE);
			}
			return empty;
		}
	}

	/**
	 * Forget a path and every level above it.
	 * @param path the path
	 */
	synchronized void forgetLevelsOf(String path) {
		for (String level : levels(path)) {
			remove(level);
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
		remove(path);
		int deepestKnown = -1;
		for (int i = levels.size() - 2; i >= 0; i--) {
			if (this.paths.get(levels.get(i)) != null) {
				deepestKnown = i;
				break;
			}
		}
		return levels.subList(deepestKnown + 1, levels.size());
	}

	private void put(String path, Boolean empty) {
		Boolean before = this.paths.put(path, empty);
		if (before != empty) {
			emptied(((before == Boolean.FALSE) ? -1 : 0) + ((empty == Boolean.FALSE) ? 1 : 0));
		}
	}

	private void remove(String path) {
		if (this.paths.remove(path) == Boolean.FALSE) {
			emptied(-1);
		}
	}

	private void emptied(int change) {
		this.empty += change;
		this.anyEmpty = this.empty > 0;
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
