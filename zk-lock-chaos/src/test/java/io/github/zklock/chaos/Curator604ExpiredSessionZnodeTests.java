package io.github.zklock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher.Event.EventType;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockException;
import io.github.zklock.LockHandle;
import io.github.zklock.LockMode;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.chaos.Chaos.ClientSocket;
import io.github.zklock.curator.ClosedTogether;
import io.github.zklock.curator.CuratorLockAdmin;
import io.github.zklock.curator.CuratorLockRegistry;
import io.github.zklock.curator.HeldLock;
import io.github.zklock.curator.LocalHandoff;
import io.github.zklock.curator.LockThread;
import io.github.zklock.spi.LockTarget;
import io.github.zklock.spi.RegistryGrant;
import io.github.zklock.test.TcpProxy;
import io.github.zklock.test.ZooKeeperExtension;

import static io.github.zklock.curator.Polling.await;
import static io.github.zklock.curator.Targets.asRequest;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * <a href="https://issues.apache.org/jira/browse/CURATOR-604">CURATOR-604</a>: after a session
 * expiry, a lock recipe took a znode of the previous session, about to vanish or already gone, for
 * its own and granted the lock on it. The rule here: no grant is ever made on a znode of a
 * previous, expired session. Every grant that an application under test hands out across a session
 * expiry is checked as it is handed out: held, its znode must exist and belong to the session the
 * client has at that moment ({@link Stat#getEphemeralOwner()} against
 * {@code getZooKeeper().getSessionId()}); otherwise it must be reported {@link LockState#LOST}, or
 * the request must fail with a {@link LockException}. The one held grant accepted on a znode that
 * is gone is one made on a znode of the session the client still has, in the moments after the
 * server closed that session and before the client heard of it; such a grant must then be reported
 * lost (see below).
 *
 * <p>Every kind is run, each on a key of its own, all at once around one expiry: a reentrant
 * EXCLUSIVE lock ({@code InterProcessMutex}), a non-reentrant one (a one-lease
 * {@code InterProcessSemaphoreV2}), READ and WRITE ({@code InterProcessReadWriteLock}), a permit of
 * a semaphore of {@value #PERMITS}, each asked on a thread ({@code tryAcquire}) and without one
 * ({@link LockTemplate#async()}), both through the registry's one local queue per key
 * ({@code LockKey}) and its znode acquisitions ({@code ZnodeAcquisition}); with local hand-off on
 * and off. The session of the application under test
 * is ended on the server as {@link Chaos#expireSession} ends it (another handle takes the session
 * over and closes it: its ephemeral znodes are gone at once), at these moments:
 * <ul>
 * <li>while it waits behind a holder of another application, which lets go once the waiters of
 * threads queued again in the new session;</li>
 * <li>during its creates: its connection goes through a {@link TcpProxy} that holds the server's
 * answers; its requests reach the server and create their znodes, the session is ended, and then
 * the held answers are either lost with the connection (so Curator's create, and the registry's
 * background create, find their protected name again in the new session) or delivered before the
 * connection closes (so the client learns of a create that succeeded in a session already
 * gone);</li>
 * <li>while it holds, a second request of it waiting behind (locally, or in ZooKeeper); the first
 * grant is released at once after the session ended, when the application reports it in doubt, or
 * when it reports it lost; before that release the holding thread re-enters its grant (reentrant
 * kinds); after it, the releasing side asks again.</li>
 * </ul>
 *
 * <p>Why no grant lands on a previous session's znode:
 * <ul>
 * <li>An acquisition ({@code ZnodeAcquisition}) is granted only on a listing of the lock's
 * children, which the server answers in the client's current session; a znode of a session the
 * server has closed is never in a listing made in a later session (the server applies the close
 * before it creates the next session). Curator's protected-name recovery deletes a znode it finds
 * from an earlier session instead of adopting it ({@code ProtectedMode.validateFoundNode}).</li>
 * <li>The acquisition notes the ZooKeeper handle instance (one per session) as it sends its
 * create; a znode whose create answered after the instance changed belongs to no known session:
 * its grant is never handed out, the znode is deleted and the wait goes on in the current session
 * ({@code LockKey}). A grant nested in a lost one is refused.</li>
 * <li>Local hand-off hands a znode on only while the client is connected with the instance that
 * acquired it, within half a session timeout of the requests that granted it.</li>
 * </ul>
 * What no client can see: a session closed on the server while the client is still connected to
 * it, until the connection's close reaches the client (such a close, unlike an expiry by timeout,
 * gives no notice; the NIO client socket waits 100 ms more before it reports the disconnection). A
 * local decision made in those moments stands on a znode of the client's current session, which
 * then turns out gone: here a hand-off by a thread that releases at once, and an asynchronous
 * grant made on the answers of a create and a listing that arrive after the close. Such a grant
 * must be reported lost once the client hears of the close, and is. A session that expires by its
 * timeout gives no such moment to a hand-off: the server expires it no sooner than a session
 * timeout after it last heard from the client, which is after the requests that granted the znode,
 * and the client hands a znode on only within half a session timeout of those; and the client
 * notices a silent server after two thirds of the session timeout, before the server may expire
 * the session.
 */
@Tag("chaos")
class Curator604ExpiredSessionZnodeTests {

	private static final String ROOT = "/curator-604";

	/**
	 * The session timeout of the application under test: long enough that no session ends but by
	 * the test's hand, and that the half-timeout bound of the local hand-off (see
	 * {@link LocalHandoff}) is not what stops a hand-off here.
	 */
	private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(4);

	/** The wait time of every request. */
	private static final Duration WAIT = Duration.ofSeconds(20);

	/** The bound of every wait of the test itself. */
	private static final Duration BOUND = Duration.ofSeconds(30);

	private static final int PERMITS = 2;

	private static final String ASYNC = "async";

	/** One server for the class; containers kept (they are the lock paths the creates go below). */
	@RegisterExtension
	static final ZooKeeperExtension zooKeeper = Chaos.zooKeeper().withContainerCheckInterval(Duration.ofMinutes(10));

	private static final List<Case> CASES = Stream.of(Kind.values())
		.flatMap((kind) -> Stream.of(Api.values()).map((api) -> new Case(kind, api)))
		.toList();

	private final ExecutorService checks = Executors.newCachedThreadPool();

	private final Map<String, LockThread> threads = new ConcurrentHashMap<>();

	/** The owner of every ephemeral znode seen below the root, for znodes gone when a grant is checked. */
	private final Map<String, Long> owners = new ConcurrentHashMap<>();

	private final List<String> violations = new CopyOnWriteArrayList<>();

	private final List<String> problems = new CopyOnWriteArrayList<>();

	private @Nullable TcpProxy proxy;

	/** The client of the application under test, connected through {@link #proxy}. */
	private CuratorFramework client;

	private CuratorLockRegistry registry;

	private LockTemplate template;

	private CuratorLockAdmin admin;

	/** Reads znodes, in a session of its own. */
	private CuratorFramework observer;

	private CuratorFramework contenderClient;

	/** The other application, connected directly: it holds the keys the application under test waits for. */
	private @Nullable CuratorLockRegistry contender;

	private final LockThread contenderThread = new LockThread("c604-contender");

	private String moment;

	private boolean handoff;

	@AfterEach
	void stop() throws Exception {
		// The extension closes the clients after this.
		for (LockThread thread : this.threads.values()) {
			thread.close();
		}
		this.contenderThread.close();
		this.checks.shutdownNow();
		Chaos.closeQuietly(this.registry);
		Chaos.closeQuietly(this.contender);
		// The clients at once (each close waits 100 ms in the NIO socket's cleanup), and the client
		// under test before its proxy: through a closed proxy its session's close cannot reach the
		// server, and the client retries until it gives up (about 1.5 s).
		ClosedTogether.close(this.client, this.observer, this.contenderClient);
		Chaos.closeQuietly(this.proxy);
	}

	/**
	 * Expiry while queued: the other application holds every key; the application under test waits
	 * for each (two requests where the second waits behind the first's grant). Its session ends;
	 * the waiters of threads queue again in the new session (Curator's recipes create their znodes
	 * again when theirs is gone); the asynchronous ones end with the session or queue again. Then
	 * the other application lets go.
	 */
	@ParameterizedTest(name = "local hand-off {0}")
	@ValueSource(booleans = { true, false })
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void expiryWhileQueuedBehindAnotherHolder(boolean handoff) throws Exception {
		start("queued", handoff);
		List<LockHandle> blockers = new ArrayList<>();
		for (Case each : CASES) {
			for (int i = 0; i < each.kind().blockers(); i++) {
				blockers.add(this.contenderThread.acquire(this.contender, each.kind().blocker(key(each))));
			}
		}
		Map<Case, List<CompletableFuture<String>>> answers = new LinkedHashMap<>();
		for (Case each : CASES) {
			int requests = each.secondWaitsBehindFirst() ? 2 : 1;
			for (int i = 1; i <= requests; i++) {
				answers.computeIfAbsent(each, (c) -> new ArrayList<>()).add(acquireCheckRelease(each, "w" + i));
			}
		}
		long firstSession = sessionId();
		for (Case each : CASES) {
			awaitZnodes(each, firstSession, queuedZnodes(each, handoff));
		}
		long secondSession = expire(firstSession);
		for (Case each : CASES) {
			await().atMost(BOUND)
				.pollInterval(Duration.ofMillis(10))
				.until(() -> znodes(each, secondSession) > 0 || answers.get(each).stream().allMatch(CompletableFuture::isDone));
		}
		this.contenderThread.call(() -> {
			blockers.forEach(LockHandle::release);
			return null;
		});
		finish(answers, firstSession, secondSession);
	}

	/**
	 * Expiry during the creates, the server's answers lost: each request's first create reaches the
	 * server, which creates the znode; the session is ended, the connection closed with the answers
	 * held. Curator retries the create in the new session, where its protected name finds nothing.
	 */
	@ParameterizedTest(name = "local hand-off {0}")
	@ValueSource(booleans = { true, false })
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void expiryDuringTheCreateWhoseAnswerIsLost(boolean handoff) throws Exception {
		expiryDuringTheCreate("create-answer-lost", handoff, false);
	}

	/**
	 * Expiry during the creates, the server's answers delivered: as above, but the client receives
	 * the answers of its creates (and of the listings sent with them) before it learns that the
	 * connection is closed: creates that succeeded in a session that the server has closed since.
	 */
	@ParameterizedTest(name = "local hand-off {0}")
	@ValueSource(booleans = { true, false })
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void expiryDuringTheCreateWhoseAnswerComesAfterTheClose(boolean handoff) throws Exception {
		expiryDuringTheCreate("create-answer-delivered", handoff, true);
	}

	private void expiryDuringTheCreate(String moment, boolean handoff, boolean answersDelivered) throws Exception {
		start(moment, handoff);
		// Each key once first: its parents exist, its number of permits is stored and checked, so
		// that the next request's first write is the create of its lock znode.
		Map<Case, List<CompletableFuture<String>>> warmUp = new LinkedHashMap<>();
		for (Case each : CASES) {
			warmUp.put(each, List.of(acquireCheckRelease(each, "warm-up")));
		}
		for (List<CompletableFuture<String>> each : warmUp.values()) {
			each.get(0).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}
		this.proxy.freezeReplies();
		Map<Case, List<CompletableFuture<String>>> answers = new LinkedHashMap<>();
		for (Case each : CASES) {
			answers.put(each, List.of(acquireCheckRelease(each, "w1")));
		}
		long firstSession = sessionId();
		for (Case each : CASES) {
			awaitZnodes(each, firstSession, 1);
		}
		long secondSession = expire(firstSession, () -> {
			if (!answersDelivered) {
				this.proxy.drop(Duration.ZERO);
			}
			this.proxy.heal();
		});
		finish(answers, firstSession, secondSession);
	}

	/**
	 * Expiry while held: the application under test holds every key, a second request of it waits
	 * behind where one would (locally with hand-off, else in ZooKeeper; READ requests would hold
	 * together); for the permit, the other application holds one of the two permits. The session
	 * ends; each first grant is then released at once, once reported in doubt, or once reported
	 * lost. Before that release a thread re-enters its grant (reentrant kinds, not at once); after
	 * it, the same side asks again.
	 */
	@ParameterizedTest(name = "local hand-off {0}, released {1}")
	@MethodSource("handoffAndRelease")
	@Timeout(value = 2, unit = TimeUnit.MINUTES)
	void expiryWhileHeldThenAcquiringAgain(boolean handoff, Release release) throws Exception {
		start("held-released-" + release.name().toLowerCase().replace('_', '-'), handoff);
		// The other application holds one of the two permits, so that a second permit request waits.
		List<LockHandle> blockers = new ArrayList<>();
		for (Api api : Api.values()) {
			blockers.add(this.contenderThread.acquire(this.contender, Kind.PERMIT.target(key(new Case(Kind.PERMIT, api)))));
		}
		Map<Case, Granted> firsts = new LinkedHashMap<>();
		Map<Case, List<CompletableFuture<String>>> answers = new LinkedHashMap<>();
		for (Case each : CASES) {
			Granted first = acquire(each, "g1").get(BOUND.toSeconds(), TimeUnit.SECONDS);
			firsts.put(each, first);
			answers.computeIfAbsent(each, (c) -> new ArrayList<>())
				.add(CompletableFuture.completedFuture(first.label() + ": " + verdict(first)));
			assertThat(first.state()).as("%s: first grant", each).isEqualTo(LockState.HELD);
		}
		for (Case each : CASES) {
			if (each.kind() != Kind.READ) {
				answers.get(each).add(acquireCheckRelease(each, "w2"));
			}
		}
		long firstSession = sessionId();
		for (Case each : CASES) {
			awaitZnodes(each, firstSession, heldZnodes(each, handoff));
			if (each.kind() != Kind.READ) {
				String waiter = (each.api() == Api.SYNC) ? threadName(each, "w2") : ASYNC;
				await().atMost(BOUND)
					.until(() -> this.admin.describeWaitingLocks()
						.stream()
						.anyMatch((waiting) -> waiting.path().equals(lockPath(each)) && waiting.waiter().equals(waiter)));
			}
		}
		List<CompletableFuture<String>> releases = new ArrayList<>();
		// Each first grant's side goes on as soon as the server closed the session.
		long secondSession = expire(firstSession, () -> {
			for (Case each : CASES) {
				CompletableFuture<String> released = releaseThenAcquireAgain(each, firsts.get(each), release);
				releases.add(released);
				answers.get(each).add(released);
			}
		});
		CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		finish(answers, firstSession, secondSession);
		this.contenderThread.call(() -> {
			blockers.forEach(LockHandle::release);
			return null;
		});
	}

	static Stream<Arguments> handoffAndRelease() {
		return Stream.of(true, false)
			.flatMap((handoff) -> Stream.of(Release.values()).map((release) -> Arguments.of(handoff, release)));
	}

	/**
	 * On the first grant's side (its thread, or a thread of the test for an asynchronous grant):
	 * wait for the moment, re-enter (reentrant kinds, on a thread), release, ask again.
	 */
	private CompletableFuture<String> releaseThenAcquireAgain(Case each, Granted first, Release release) {
		Callable<String> task = () -> {
			LockHandle handle = first.handle();
			List<String> seen = new ArrayList<>();
			if (release != Release.AT_ONCE) {
				await().atMost(BOUND)
					.pollInterval(Duration.ofMillis(5))
					.until(() -> (release == Release.WHEN_IN_DOUBT) ? handle.state() != LockState.HELD
							: handle.state() == LockState.LOST);
				seen.add("g1 " + handle.state());
				if (each.api() == Api.SYNC && each.kind().reentrant()) {
					Granted nested = acquireHere(each, "nested");
					seen.add(nested.label() + ": " + verdict(nested));
					releaseHere(nested);
				}
			}
			handle.release();
			seen.add("g1 released");
			Granted again = acquireHere(each, "again");
			seen.add(again.label() + ": " + verdict(again));
			releaseHere(again);
			return String.join(", ", seen);
		};
		return (each.api() == Api.SYNC) ? first.thread().submit(task) : CompletableFuture.supplyAsync(() -> {
			try {
				return task.call();
			}
			catch (Exception ex) {
				throw new CompletionException(ex);
			}
		}, this.checks);
	}

	private void start(String moment, boolean handoff) throws Exception {
		this.moment = moment;
		this.handoff = handoff;
		this.proxy = TcpProxy.start(zooKeeper.getPort());
		this.client = zooKeeper.newClient(Chaos.clientSettings(SESSION_TIMEOUT, ClientSocket.NIO)
			.andThen((builder) -> builder.connectString(this.proxy.connectString())));
		this.registry = new CuratorLockRegistry(this.client, ROOT, 64);
		this.registry.setLocalHandoff(handoff ? LocalHandoff.DEFAULT : LocalHandoff.DISABLED);
		this.template = new LockTemplate(this.registry, WAIT);
		this.admin = new CuratorLockAdmin(this.registry);
		this.observer = zooKeeper.newClient();
		this.contenderClient = zooKeeper.newClient(Chaos.clientSettings(Duration.ofSeconds(10), ClientSocket.NIO));
		this.contender = new CuratorLockRegistry(this.contenderClient, ROOT, 64);
	}

	/**
	 * End the session of the application under test on the server and wait until its client has
	 * a new one.
	 * @return the new session's id
	 */
	private long expire(long session) throws Exception {
		return expire(session, () -> {
		});
	}

	/**
	 * End the session as {@link Chaos#expireSession} does, and run what comes next as soon as the
	 * server has ended it: a second handle takes the session over (the server closes the client's
	 * connection) and closes it; once one of the session's znodes is seen gone (the server deletes
	 * them all with the session), {@code afterwards} runs. The client hears of its closed connection
	 * a little later (100 ms later with the NIO socket). {@link Chaos#expireSession} then makes
	 * sure that the session is over.
	 * @param session the client's session, which has znodes below the root
	 * @return the client's new session
	 */
	private long expire(long session, Runnable afterwards) throws Exception {
		recordOwners(ROOT);
		String znode = this.owners.entrySet()
			.stream()
			.filter((owned) -> owned.getValue() == session)
			.map(Map.Entry::getKey)
			.findFirst()
			.orElseThrow();
		ZooKeeper current = this.client.getZookeeperClient().getZooKeeper();
		BlockingQueue<KeeperState> states = new LinkedBlockingQueue<>();
		ZooKeeper probe = Chaos.probe(zooKeeper.getConnectString(), current.getSessionTimeout(), (event) -> {
			if (event.getType() == EventType.None) {
				states.add(event.getState());
			}
		}, current.getSessionId(), current.getSessionPasswd());
		CompletableFuture<Void> closed;
		try {
			assertThat(states.poll(BOUND.toSeconds(), TimeUnit.SECONDS)).as("the session taken over")
				.isEqualTo(KeeperState.SyncConnected);
		}
		finally {
			// Closing returns once the probe's own connection is cleaned up, well after the session ended.
			closed = CompletableFuture.runAsync(() -> {
				try {
					probe.close((int) BOUND.toMillis());
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}, this.checks);
		}
		await().atMost(BOUND)
			.pollInterval(Duration.ofMillis(1))
			.until(() -> this.observer.checkExists().forPath(znode) == null);
		afterwards.run();
		closed.get(BOUND.toSeconds(), TimeUnit.SECONDS);
		// That session, not the one the client may have started since.
		Chaos.expireSession(zooKeeper.getConnectString(), current.getSessionId(), current.getSessionPasswd(),
				current.getSessionTimeout(), BOUND);
		await().atMost(BOUND)
			.pollInterval(Duration.ofMillis(10))
			.until(() -> this.client.getZookeeperClient().isConnected() && sessionId() != session);
		return sessionId();
	}

	/**
	 * Wait for every answer (each checked as it was handed out), report them, and assert that none
	 * broke the rule.
	 */
	private void finish(Map<Case, List<CompletableFuture<String>>> answers, long firstSession, long secondSession)
			throws Exception {
		Map<Case, List<String>> verdicts = new LinkedHashMap<>();
		for (Map.Entry<Case, List<CompletableFuture<String>>> entry : answers.entrySet()) {
			for (CompletableFuture<String> answer : entry.getValue()) {
				String verdict;
				try {
					verdict = answer.get(BOUND.toSeconds(), TimeUnit.SECONDS);
				}
				catch (ExecutionException ex) {
					verdict = problem(entry.getKey() + ": " + ex.getCause());
				}
				verdicts.computeIfAbsent(entry.getKey(), (c) -> new ArrayList<>()).add(verdict);
			}
		}
		verdicts.forEach((each, seen) -> Chaos.report("curator_604 moment=%s handoff=%s case=%s sessions=%x->%x %s",
				this.moment, this.handoff ? "on" : "off", each, firstSession, secondSession, seen));
		assertThat(this.violations).as("grants held on a znode of another session").isEmpty();
		assertThat(this.problems).as("answers other than a grant or a LockException").isEmpty();
		// The checks saw grants of the new session, not only failures: requests of threads queue
		// again in it. (Answers of a create and a listing that arrive after the close may grant on a
		// znode of the closed session, reported lost, to a thread as to an asynchronous request:
		// both send the two at once.)
		for (Case each : CASES) {
			if (each.api() == Api.SYNC && !"create-answer-delivered".equals(this.moment)) {
				assertThat(verdicts.get(each)).as("%s: answers", each)
					.anySatisfy((verdict) -> assertThat(verdict).contains(heldIn(secondSession)));
			}
		}
	}

	/**
	 * Ask on the request's own thread (sync), or without one, then check the answer as it is
	 * handed out, and release the grant.
	 * @return the verdict
	 */
	private CompletableFuture<String> acquireCheckRelease(Case each, String label) {
		return acquire(each, label).thenApplyAsync((granted) -> {
			String verdict = granted.label() + ": " + verdict(granted);
			if (granted.handle() != null) {
				try {
					release(granted).get(BOUND.toSeconds(), TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					return verdict + ", " + problem(each + " " + label + ": release failed: " + ex);
				}
			}
			return verdict;
		}, this.checks);
	}

	private CompletableFuture<Granted> acquire(Case each, String label) {
		if (each.api() == Api.SYNC) {
			return thread(each, label).submit(() -> acquireHere(each, label));
		}
		return this.template.async().tryAcquire(asRequest(target(each))).handle((handle, ex) -> {
			if (ex != null) {
				return failed(label, ex, null);
			}
			return seen(label, handle.map(LockHandle.class::cast).orElse(null), ASYNC, null);
		});
	}

	/** Ask on the current thread (sync: the request's thread), and see the answer at once. */
	private Granted acquireHere(Case each, String label) throws Exception {
		if (each.api() == Api.ASYNC) {
			return acquire(each, label).get(BOUND.toSeconds(), TimeUnit.SECONDS);
		}
		LockThread thread = this.threads.get(Thread.currentThread().getName());
		try {
			Optional<RegistryGrant> handle = this.registry.tryAcquire(target(each));
			return seen(label, handle.orElse(null), Thread.currentThread().getName(), thread);
		}
		catch (LockException ex) {
			return failed(label, ex, thread);
		}
	}

	private void releaseHere(Granted granted) {
		if (granted.handle() != null) {
			granted.handle().release();
		}
	}

	private CompletableFuture<Void> release(Granted granted) {
		LockHandle handle = granted.handle();
		if (granted.thread() == null) {
			((AsyncLockHandle) handle).release();
			return CompletableFuture.completedFuture(null);
		}
		return granted.thread().submit(() -> {
			handle.release();
			return null;
		});
	}

	/**
	 * What a request got, seen as it was handed out, without a request to ZooKeeper: the grant's
	 * state, the client's session, and the grant's znode (from the operator view).
	 */
	private Granted seen(String label, @Nullable LockHandle handle, String holder, @Nullable LockThread thread) {
		if (handle == null) {
			return new Granted(label, null, null, 0, null, null, thread);
		}
		LockState state = handle.state();
		long session = sessionId();
		List<HeldLock> held = this.admin.describeHeldLocks()
			.stream()
			.filter((lock) -> lock.path().equals(handle.path()) && lock.mode() == handle.mode()
					&& lock.holder().equals(holder) && lock.state() == state)
			.toList();
		Set<String> nodes = held.stream().map(HeldLock::node).collect(Collectors.toSet());
		String node = (nodes.size() == 1) ? nodes.iterator().next() : null;
		if (node == null) {
			problem(label + ": cannot tell the znode of " + handle + " among " + held);
		}
		return new Granted(label, handle, state, session, node, null, thread);
	}

	private Granted failed(String label, Throwable failure, @Nullable LockThread thread) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return new Granted(label, null, null, 0, null, cause, thread);
	}

	/**
	 * Check a grant as it was handed out: held on a znode of the client's session then, or in doubt
	 * or lost and never held again on another session's znode, or a {@link LockException}.
	 */
	private String verdict(Granted granted) {
		Throwable failure = granted.failure();
		if (failure != null) {
			return (failure instanceof LockException) ? "failed (" + failure.getClass().getSimpleName() + ")"
					: problem(granted.label() + ": failed with " + failure);
		}
		LockHandle handle = granted.handle();
		if (handle == null) {
			return problem(granted.label() + ": not granted within " + WAIT);
		}
		String node = granted.node();
		if (node == null) {
			return "znode unknown";
		}
		try {
			switch (granted.state()) {
				case HELD -> {
					Stat stat = this.observer.checkExists().forPath(node);
					if (stat != null) {
						return (stat.getEphemeralOwner() == granted.session()) ? heldIn(granted.session())
								: violation(granted, "held on " + node + " of session "
										+ Long.toHexString(stat.getEphemeralOwner()));
					}
					Long owner = this.owners.get(node);
					if (owner == null || owner != granted.session()) {
						return violation(granted, "held on " + node + ", gone, of session "
								+ ((owner != null) ? Long.toHexString(owner) : "unknown"));
					}
					// Granted in its session's last moments, before the client heard that the server
					// had closed it: the application must report it lost.
					if (!reaches(handle, LockState.LOST)) {
						return violation(granted, "held on " + node + " of its closed session, and not reported lost");
					}
					return "held on a znode of its session as the server closed it, then LOST";
				}
				case IN_DOUBT -> {
					await().atMost(BOUND).pollInterval(Duration.ofMillis(10)).until(() -> handle.state() != LockState.IN_DOUBT);
					LockState later = handle.state();
					if (later == LockState.HELD) {
						Stat stat = this.observer.checkExists().forPath(node);
						long session = sessionId();
						if (stat == null || stat.getEphemeralOwner() != session) {
							return violation(granted, "in doubt, then held on " + node + " not of session "
									+ Long.toHexString(session));
						}
						return "IN_DOUBT, then " + heldIn(session);
					}
					return "IN_DOUBT, then " + later;
				}
				default -> {
					return granted.state().toString();
				}
			}
		}
		catch (Exception ex) {
			return problem(granted.label() + ": check failed: " + ex);
		}
	}

	private static String heldIn(long session) {
		return "HELD on a znode of its session " + Long.toHexString(session);
	}

	private String violation(Granted granted, String what) {
		String message = this.moment + " hand-off " + (this.handoff ? "on" : "off") + " " + granted.label()
				+ " (client session " + Long.toHexString(granted.session()) + "): " + what;
		this.violations.add(message);
		return "VIOLATION " + message;
	}

	private String problem(String what) {
		this.problems.add(this.moment + " hand-off " + (this.handoff ? "on" : "off") + ": " + what);
		return "PROBLEM " + what;
	}

	private static boolean reaches(LockHandle handle, LockState state) {
		try {
			await().atMost(BOUND).pollInterval(Duration.ofMillis(10)).until(() -> handle.state() == state);
			return true;
		}
		catch (org.awaitility.core.ConditionTimeoutException ex) {
			return false;
		}
	}

	private long sessionId() {
		try {
			return this.client.getZookeeperClient().getZooKeeper().getSessionId();
		}
		catch (Exception ex) {
			throw new IllegalStateException("No ZooKeeper handle", ex);
		}
	}

	/** Wait until the lock of a case has at least that many znodes of the session, at any depth. */
	private void awaitZnodes(Case each, long session, int count) {
		await().atMost(BOUND)
			.pollInterval(Duration.ofMillis(10))
			.until(() -> znodes(each, session) >= count);
	}

	private int znodes(Case each, long session) throws Exception {
		Map<String, Long> found = new HashMap<>();
		collectOwners(lockPath(each), found);
		return (int) found.values().stream().filter((owner) -> owner == session).count();
	}

	private void recordOwners(String path) throws Exception {
		Map<String, Long> found = new HashMap<>();
		collectOwners(path, found);
		this.owners.putAll(found);
	}

	private void collectOwners(String path, Map<String, Long> found) throws Exception {
		List<String> children;
		try {
			children = this.observer.getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return;
		}
		for (String child : children) {
			String childPath = ZKPaths.makePath(path, child);
			Stat stat = this.observer.checkExists().forPath(childPath);
			if (stat != null && stat.getEphemeralOwner() != 0) {
				found.put(childPath, stat.getEphemeralOwner());
			}
			else if (stat != null) {
				collectOwners(childPath, found);
			}
		}
	}

	private String key(Case each) {
		return "/" + this.moment + "-" + (this.handoff ? "on" : "off") + "-" + each.kind().name().toLowerCase() + "-"
				+ each.api().name().toLowerCase();
	}

	private String lockPath(Case each) {
		return this.registry.lockPath(key(each));
	}

	private LockTarget target(Case each) {
		return each.kind().target(key(each));
	}

	/** The request's thread (a grant of a thread is released on it). */
	private LockThread thread(Case each, String label) {
		return this.threads.computeIfAbsent(threadName(each, label), LockThread::new);
	}

	private static String threadName(Case each, String label) {
		return "c604-" + each.kind().name().toLowerCase() + "-" + label;
	}

	/** How many znodes of its session a case's waiters have queued, all queued. */
	private static int queuedZnodes(Case each, boolean handoff) {
		if (each.kind().leases()) {
			// A waiter holds the semaphore's internal lock and a lease; the next one waits for the lock.
			return each.secondWaitsBehindFirst() ? 3 : 2;
		}
		// The key's local queue queues one znode for its waiters, threads and asynchronous alike.
		return 1;
	}

	/** How many znodes of its session a case has once the first grant is held and the second request waits. */
	private static int heldZnodes(Case each, boolean handoff) {
		if (each.kind().leases()) {
			// The first grant's lease; the second request's internal lock and lease.
			return 3;
		}
		// The first grant's znode: a second EXCLUSIVE or WRITE request waits in the key's local queue,
		// synchronous or not, with hand-off or without.
		return 1;
	}

	/** What the application under test asks for. */
	enum Kind {

		EXCLUSIVE, NON_REENTRANT, READ, WRITE, PERMIT;

		LockTarget target(String key) {
			return switch (this) {
				case EXCLUSIVE -> new LockTarget(key, LockMode.EXCLUSIVE, true, 0, WAIT);
				case NON_REENTRANT -> new LockTarget(key, LockMode.EXCLUSIVE, false, 0, WAIT);
				case READ -> new LockTarget(key, LockMode.READ, true, 0, WAIT);
				case WRITE -> new LockTarget(key, LockMode.WRITE, true, 0, WAIT);
				case PERMIT -> new LockTarget(key, LockMode.EXCLUSIVE, false, PERMITS, WAIT);
			};
		}

		/** What the other application holds to make a request of this kind wait. */
		LockTarget blocker(String key) {
			return (this == READ) ? WRITE.target(key) : target(key);
		}

		/** How many of {@link #blocker} it takes. */
		int blockers() {
			return (this == PERMIT) ? PERMITS : 1;
		}

		boolean reentrant() {
			return this == EXCLUSIVE || this == READ || this == WRITE;
		}

		/** Whether the grants are leases of a semaphore. */
		boolean leases() {
			return this == NON_REENTRANT || this == PERMIT;
		}

		/** Whether the application's asynchronous requests of this kind share a znode. */
		boolean chained() {
			return this == EXCLUSIVE || this == WRITE;
		}

	}

	/** How the application under test asks. */
	enum Api {

		/** {@code tryAcquire} on a thread: Curator's recipes, through the local hand-off if on. */
		SYNC,

		/** {@link LockTemplate#async()}: the registry's own non-blocking queue, no thread. */
		ASYNC

	}

	/** When the first grant is released once the session ended. */
	enum Release {

		AT_ONCE, WHEN_IN_DOUBT, WHEN_LOST

	}

	/** One kind asked one way, on a key of its own. */
	record Case(Kind kind, Api api) {

		/**
		 * Whether a second request queues behind the first one's grant, while the first waits for
		 * the other application: threads of any kind but READ, asynchronous chains.
		 */
		boolean secondWaitsBehindFirst() {
			return (this.api == Api.SYNC) ? this.kind != Kind.READ : this.kind.chained();
		}

		@Override
		public String toString() {
			return this.kind + "/" + this.api;
		}

	}

	/**
	 * An answer as it was handed out.
	 * @param handle the grant, {@code null} when none
	 * @param state its state then
	 * @param session the client's session then
	 * @param node its znode, from the operator view
	 * @param failure what the request failed with, if it did
	 * @param thread the thread the grant is bound to, {@code null} for an asynchronous one
	 */
	private record Granted(String label, @Nullable LockHandle handle, @Nullable LockState state, long session,
			@Nullable String node, @Nullable Throwable failure, @Nullable LockThread thread) {
	}

}
