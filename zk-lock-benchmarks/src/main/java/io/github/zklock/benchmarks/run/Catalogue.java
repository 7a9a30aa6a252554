package io.github.zklock.benchmarks.run;

import java.util.List;

import io.github.zklock.benchmarks.ContendedBenchmarks;
import io.github.zklock.benchmarks.ThreadPaths;
import io.github.zklock.benchmarks.UncontendedBenchmarks;

/**
 * The benchmarks by name, in report order, with the group they are interleaved in: the members of
 * a group run one batch each, in turn, round after round, so that every ratio compares batches
 * measured seconds apart on the same server and JVM.
 */
final class Catalogue {

	/** How one thread runs one operation of a benchmark. */
	@FunctionalInterface
	interface Operation {

		void run(ThreadPaths paths) throws Exception;

	}

	/** A benchmark: its JMH method name, its group, its threads, what it does. */
	record Member(String name, String group, int threads, String description, Operation operation) {
	}

	/** The names and descriptions, without fixtures (for the report). */
	static final List<Member> DESCRIPTIONS = members(null);

	private Catalogue() {
	}

	/**
	 * Return the members bound to fixtures.
	 * @param f the fixtures, or {@code null} for descriptions only (operations then fail)
	 * @return every member
	 */
	static List<Member> members(Fixtures f) {
		UncontendedBenchmarks u = new UncontendedBenchmarks();
		ContendedBenchmarks c = new ContendedBenchmarks();
		return List.of(
				new Member("zooKeeperFloor", "exclusive", 1, "floor: plain ZooKeeper client, create(EPHEMERAL) + delete",
						(p) -> u.zooKeeperFloor(f.plain)),
				new Member("rawMutex", "exclusive", 1, "raw Curator InterProcessMutex (baseline)",
						(p) -> u.rawMutex(f.raw)),
				new Member("templateMutex", "exclusive", 1, "LockTemplate.execute, EXCLUSIVE",
						(p) -> u.templateMutex(f.ours)),
				new Member("templateAsync", "exclusive", 1,
						"LockTemplate.executeAsync, EXCLUSIVE, completed stage, joined (grant thread of its own)",
						(p) -> u.templateAsync(f.ours)),
				new Member("annotatedMutex", "exclusive", 1, "@DistributedLock proxy, EXCLUSIVE, SpEL path",
						(p) -> u.annotatedMutex(f.annotated)),
				new Member("annotatedAsync", "exclusive", 1,
						"@DistributedLock proxy, CompletableFuture method, EXCLUSIVE, completed, joined",
						(p) -> u.annotatedAsync(f.annotated)),
				new Member("annotatedMutexFastPath", "exclusive", 1,
						"diagnosis: @DistributedLock, SpEL skipped for argument-only templates (prototype)",
						(p) -> u.annotatedMutexFastPath(f.annotatedFastPath)),
				new Member("springIntegration", "exclusive", 1,
						"peer: Spring Integration ZookeeperLockRegistry obtain + lock + unlock",
						(p) -> u.springIntegration(f.springIntegration)),
				new Member("lock4j", "exclusive", 1, "peer: lock4j LockTemplate + ZookeeperLockExecutor lock + release",
						(p) -> u.lock4j(f.lock4j)),
				new Member("rawRead", "read", 1, "raw InterProcessReadWriteLock read lock (baseline)",
						(p) -> u.rawRead(f.raw)),
				new Member("templateRead", "read", 1, "LockTemplate.execute, READ", (p) -> u.templateRead(f.ours)),
				new Member("templateAsyncRead", "read", 1, "LockTemplate.executeAsync, READ, completed stage, joined",
						(p) -> u.templateAsyncRead(f.ours)),
				new Member("annotatedRead", "read", 1, "@DistributedLock proxy, READ",
						(p) -> u.annotatedRead(f.annotated)),
				new Member("rawWrite", "write", 1, "raw InterProcessReadWriteLock write lock (baseline)",
						(p) -> u.rawWrite(f.raw)),
				new Member("templateWrite", "write", 1, "LockTemplate.execute, WRITE", (p) -> u.templateWrite(f.ours)),
				new Member("annotatedWrite", "write", 1, "@DistributedLock proxy, WRITE",
						(p) -> u.annotatedWrite(f.annotated)),
				new Member("rawSemaphoreMutex", "non-reentrant", 1, "raw InterProcessSemaphoreMutex (baseline)",
						(p) -> u.rawSemaphoreMutex(f.raw)),
				new Member("templateNonReentrant", "non-reentrant", 1, "LockTemplate.execute, EXCLUSIVE reentrant=false",
						(p) -> u.templateNonReentrant(f.ours)),
				new Member("annotatedNonReentrant", "non-reentrant", 1, "@DistributedLock(reentrant = false) proxy",
						(p) -> u.annotatedNonReentrant(f.annotated)),
				new Member("rawMultiLock", "multi", 1, "raw InterProcessMultiLock of two InterProcessMutex (baseline)",
						(p) -> u.rawMultiLock(f.raw)),
				new Member("templateMulti", "multi", 1, "LockTemplate.executeAll, EXCLUSIVE, two keys",
						(p) -> u.templateMulti(f.ours)),
				new Member("templateAsyncMulti", "multi", 1,
						"LockTemplate.async().execute, EXCLUSIVE, two keys, completed stage, joined",
						(p) -> u.templateAsyncMulti(f.ours)),
				new Member("annotatedMulti", "multi", 1, "@DistributedLock proxy, EXCLUSIVE, two SpEL keys",
						(p) -> u.annotatedMulti(f.annotated)),
				new Member("rawSemaphore", "semaphore", 1, "raw InterProcessSemaphoreV2, 3 permits (baseline)",
						(p) -> u.rawSemaphore(f.raw)),
				new Member("templatePermit", "semaphore", 1, "LockTemplate.execute, a permit of 3",
						(p) -> u.templatePermit(f.ours)),
				new Member("templateAsyncPermit", "semaphore", 1,
						"LockTemplate.async().execute, a permit of 3, completed stage, joined",
						(p) -> u.templateAsyncPermit(f.ours)),
				new Member("annotatedPermit", "semaphore", 1, "@DistributedSemaphore proxy, a permit of 3",
						(p) -> u.annotatedPermit(f.annotated)),
				new Member("rawMutexOnePath", "one path x8", 8, "raw InterProcessMutex shared by 8 threads (baseline)",
						(p) -> c.rawMutexOnePath(f.raw)),
				new Member("templateOnePath", "one path x8", 8, "LockTemplate.execute, EXCLUSIVE, 8 threads",
						(p) -> c.templateOnePath(f.ours)),
				new Member("springIntegrationOnePath", "one path x8", 8, "peer: Spring Integration, 8 threads",
						(p) -> c.springIntegrationOnePath(f.springIntegration)),
				new Member("lock4jOnePath", "one path x8", 8, "peer: lock4j ZooKeeper executor, 8 threads",
						(p) -> c.lock4jOnePath(f.lock4j)),
				new Member("rawMutexPerThreadOnePath", "one path x8", 8,
						"diagnosis: raw InterProcessMutex, one instance per thread", (p) -> c.rawMutexPerThreadOnePath(p)),
				new Member("rawMutexDepthOneOnePath", "one path x8", 8,
						"diagnosis: raw InterProcessMutex per thread, 1 thread admitted to ZooKeeper at a time",
						(p) -> c.rawMutexDepthOneOnePath(f.raw, p)),
				new Member("rawMutexDepthThreeOnePath", "one path x8", 8,
						"diagnosis: raw InterProcessMutex per thread, 3 threads admitted to ZooKeeper at a time",
						(p) -> c.rawMutexDepthThreeOnePath(f.raw, p)),
				new Member("rawMutexDistinctPaths", "distinct paths x8", 8,
						"raw InterProcessMutex, one path per thread (baseline)", (p) -> c.rawMutexDistinctPaths(p)),
				new Member("templateDistinctPaths", "distinct paths x8", 8, "LockTemplate.execute, one path per thread",
						(p) -> c.templateDistinctPaths(f.ours, p)),
				// Last: each cycle adds a key to the template's recipe cache, which then holds more
				// keys than any other group's, and evicts once full.
				new Member("rawMutexColdKey", "cold key", 1,
						"raw InterProcessMutex, a new one per never-seen path, parents missing (baseline)",
						(p) -> u.rawMutexColdKey(f.coldKeys)),
				new Member("templateColdKey", "cold key", 1,
						"LockTemplate.execute, EXCLUSIVE, a never-seen key, parents missing",
						(p) -> u.templateColdKey(f.ours, f.coldKeys)));
	}

	static Member describe(String name) {
		return DESCRIPTIONS.stream().filter((member) -> member.name().equals(name)).findFirst().orElse(null);
	}

}
