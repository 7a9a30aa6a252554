package io.github.zklock.engine;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The threads of asynchronous grants ({@code LockTemplate.async()}) that the registry cannot
 * make without a thread ({@link io.github.zklock.spi.LockRegistry#submit}): each such grant acquires
 * on a thread of its own, and a grant bound to that thread by its recipe releases on it too, parked
 * while the grant is held. They also deliver the registry's own asynchronous grants to their work
 * when the template has no async executor, for as long as the work takes to return its stage. Two
 * kinds, chosen per template ({@code LockTemplateBuilder.virtualGrantThreads}):
 * <ul>
 * <li>platform threads (the default): daemon threads of an unbounded pool that keeps idle threads
 * for 60 s, so that back-to-back grants reuse them;</li>
 * <li>virtual threads (Java 21 and later): a new one per grant; a parked virtual thread costs a
 * few hundred bytes and no platform thread, so thousands of waiting or held asynchronous grants
 * cost little, at some latency per cycle (see BENCHMARKS.md, "Async cycles").</li>
 * </ul>
 * Threads are named {@code zk-lock-grant-N}. Never a bounded pool: a grant's thread is occupied for
 * the whole wait and hold, so a bounded pool would queue acquisitions behind holders and could
 * starve the very work that ends a hold.
 */
final class GrantThreads {

	private static final Log logger = LogFactory.getLog(GrantThreads.class);

	private static final String NAME_PREFIX = "zk-lock-grant-";

	private GrantThreads() {
	}

	/** The pool of platform threads. */
	static Executor platform() {
		return Platform.executor;
	}

	/** A new virtual thread per task, or {@code null} before Java 21. */
	static @Nullable Executor virtual() {
		return Virtual.executor;
	}

	/** Holder: created on first use. */
	private static final class Platform {

		static final ExecutorService executor = create();

		private static ExecutorService create() {
			AtomicLong count = new AtomicLong();
			ThreadFactory factory = (task) -> {
				Thread thread = new Thread(task, NAME_PREFIX + count.incrementAndGet());
				thread.setDaemon(true);
				return thread;
			};
			return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
					factory);
		}

	}

	/** Holder: created on first use. */
	private static final class Virtual {

		static final @Nullable ExecutorService executor = create();

		private static @Nullable ExecutorService create() {
			if (Runtime.version().feature() < 21) {
				return null;
			}
			try {
				// Thread.ofVirtual().name(prefix, 1).factory(), without compiling against Java 21.
				MethodHandles.Lookup lookup = MethodHandles.publicLookup();
				Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
				Object builder = lookup.findStatic(Thread.class, "ofVirtual",
						MethodType.methodType(Class.forName("java.lang.Thread$Builder$OfVirtual")))
					.invoke();
				MethodHandle name = lookup.findVirtual(builderClass, "name",
						MethodType.methodType(builderClass, String.class, long.class));
				builder = name.invoke(builder, NAME_PREFIX, 1L);
				ThreadFactory factory = (ThreadFactory) lookup
					.findVirtual(builderClass, "factory", MethodType.methodType(ThreadFactory.class))
					.invoke(builder);
				return (ExecutorService) lookup
					.findStatic(Executors.class, "newThreadPerTaskExecutor",
							MethodType.methodType(ExecutorService.class, ThreadFactory.class))
					.invoke(factory);
			}
			catch (Throwable ex) {
				logger.warn("Virtual threads are not available; asynchronous grants use platform threads", ex);
				return null;
			}
		}

	}

}
