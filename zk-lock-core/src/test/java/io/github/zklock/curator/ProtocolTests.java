package io.github.zklock.curator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.LockInternalsSorter;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Protocol#predecessor} finds, in one pass, the znode that Curator's recipes find by
 * sorting the children with {@link LockInternals#getSortedChildren} (the mutex's and the
 * read/write lock's sorters): the same one for every listing, foreign names, equal sequence
 * numbers and any listing order included.
 */
class ProtocolTests {

	private static final StandardLockInternalsDriver DRIVER = new StandardLockInternalsDriver();

	private static final LockInternalsSorter READ_WRITE_SORTER = (name, lockName) -> StandardLockInternalsDriver
		.standardFixForSorting(StandardLockInternalsDriver.standardFixForSorting(name, "__READ__"), "__WRIT__");

	@Test
	void predecessorIsTheOneCuratorsSortedChildrenGive() {
		Random random = new Random(45);
		int compared = 0;
		for (int listing = 0; listing < 3_000; listing++) {
			List<String> children = listing(random);
			for (String ours : children) {
				for (Protocol protocol : List.of(Protocol.MUTEX, Protocol.WRITE, Protocol.READ)) {
					if (!ours.contains(protocol.lockName())) {
						continue;
					}
					assertThat(protocol.predecessor(children, ours, 1))
						.as("%s %s in %s", protocol, ours, children)
						.isEqualTo(bySorting(protocol, children, ours));
					compared++;
				}
			}
		}
		assertThat(compared).isGreaterThan(10_000);
	}

	@Test
	void firstIsGrantedAndTheOthersWatchTheOneBefore() {
		List<String> children = List.of("_c_b-lock-0000000003", "_c_a-lock-0000000001", "_c_c-lock-0000000002");
		assertThat(Protocol.MUTEX.predecessor(children, "_c_a-lock-0000000001", 1)).isNull();
		assertThat(Protocol.MUTEX.predecessor(children, "_c_c-lock-0000000002", 1)).isEqualTo("_c_a-lock-0000000001");
		assertThat(Protocol.MUTEX.predecessor(children, "_c_b-lock-0000000003", 1)).isEqualTo("_c_c-lock-0000000002");
		List<String> readWrite = List.of("x-__READ__0000000004", "y-__WRIT__0000000002", "z-__WRIT__0000000003",
				"w-__READ__0000000001");
		// A reader waits for the first writer before it; a writer for the one just before it.
		assertThat(Protocol.READ.predecessor(readWrite, "w-__READ__0000000001", 1)).isNull();
		assertThat(Protocol.READ.predecessor(readWrite, "x-__READ__0000000004", 1)).isEqualTo("y-__WRIT__0000000002");
		assertThat(Protocol.WRITE.predecessor(readWrite, "z-__WRIT__0000000003", 1)).isEqualTo("y-__WRIT__0000000002");
		assertThat(Protocol.WRITE.predecessor(readWrite, "y-__WRIT__0000000002", 1)).isEqualTo("w-__READ__0000000001");
	}

	/** What the recipes do: sort, then look before ours (InterProcessReadWriteLock's read predicate for READ). */
	private static String bySorting(Protocol protocol, List<String> children, String ours) {
		List<String> sorted = LockInternals.getSortedChildren(protocol.lockName(),
				(protocol == Protocol.MUTEX) ? DRIVER : READ_WRITE_SORTER, children);
		int index = sorted.indexOf(ours);
		if (protocol != Protocol.READ) {
			return (index == 0) ? null : sorted.get(index - 1);
		}
		for (int i = 0; i < index; i++) {
			if (sorted.get(i).contains("__WRIT__")) {
				return sorted.get(i);
			}
		}
		return null;
	}

	/** Up to 12 children: mutex, reader and writer znodes, foreign names, some sequence numbers repeated. */
	private static List<String> listing(Random random) {
		List<String> children = new ArrayList<>();
		int size = 1 + random.nextInt(12);
		for (int i = 0; i < size; i++) {
			String sequence = String.format("%010d", random.nextInt(20));
			String prefix = "_c_" + Integer.toHexString(random.nextInt(1 << 16)) + "-";
			children.add(switch (random.nextInt(5)) {
				case 0, 1 -> prefix + "lock-" + sequence;
				case 2 -> prefix + "__READ__" + sequence;
				case 3 -> prefix + "__WRIT__" + sequence;
				default -> "foreign-" + random.nextInt(3);
			});
		}
		Collections.shuffle(children, random);
		return children;
	}

}
