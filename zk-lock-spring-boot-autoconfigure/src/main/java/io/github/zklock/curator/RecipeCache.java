package io.github.zklock.curator;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/**
 * Bounded map of lock recipes, one per (path, kind). An entry is "in use" from the moment a
 * thread starts acquiring through it until that grant is released (or the attempt fails); entries
 * in use are never evicted, so that every thread waiting on or holding a path shares one recipe
 * instance and reentrancy keeps working. Idle entries are dropped once the map grows past its
 * capacity; a dropped recipe holds no znode and no watcher, so recreating it later is safe.
 */
final class RecipeCache {

	private final ConcurrentHashMap<Key, Entry> entries = new ConcurrentHashMap<>();

	private final int capacity;

	private final BiFunction<String, LockRecipe.Kind, LockRecipe> factory;

	RecipeCache(int capacity, BiFunction<String, LockRecipe.Kind, LockRecipe> factory) {
		if (capacity < 1) {
			throw new IllegalArgumentException("Recipe cache capacity must be positive, was " + capacity);
		}
		this.capacity = capacity;
		this.factory = factory;
	}

	/**
	 * Return the entry for a path and kind, creating it if needed, and mark it in use. Every call
	 * must be paired with one {@link #unretain(Entry)}.
	 */
	Entry retain(String path, LockRecipe.Kind kind) {
		return this.entries.compute(new Key(path, kind), (key, entry) -> {
			Entry result = (entry != null) ? entry : new Entry(key, this.factory.apply(path, kind));
			result.users++;
			return result;
		});
	}

	/** Mark one use of the entry as finished; may evict idle entries when over capacity. */
	void unretain(Entry entry) {
		this.entries.computeIfPresent(entry.key, (key, current) -> {
			current.users--;
			return current;
		});
		if (this.entries.size() > this.capacity) {
			evictIdle();
		}
	}

	int size() {
		return this.entries.size();
	}

	private void evictIdle() {
		// Go a little below capacity so that a busy cache does not sweep on every release.
		int target = this.capacity - Math.max(1, this.capacity / 10);
		for (Key key : this.entries.keySet()) {
			if (this.entries.size() <= target) {
				return;
			}
			// users is only read and written under the key's bin lock, inside compute.
			this.entries.computeIfPresent(key, (k, entry) -> (entry.users == 0) ? null : entry);
		}
	}

	record Key(String path, LockRecipe.Kind kind) {
	}

	static final class Entry {

		private final Key key;

		private final LockRecipe recipe;

		private int users;

		Entry(Key key, LockRecipe recipe) {
			this.key = key;
			this.recipe = recipe;
		}

		LockRecipe recipe() {
			return this.recipe;
		}

		LockRecipe.Kind kind() {
			return this.key.kind();
		}

	}

}
