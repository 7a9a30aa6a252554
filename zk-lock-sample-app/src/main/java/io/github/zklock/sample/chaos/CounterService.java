package io.github.zklock.sample.chaos;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.annotation.Profile;
import org.springframework.dao.EmptyResultDataAccessException;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.zklock.LockAssert;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockTemplate;
import io.github.zklock.annotation.DistributedLock;
import io.github.zklock.sample.SampleProperties;
import io.github.zklock.transaction.JdbcLockFence;
import io.github.zklock.transaction.StaleFencingTokenException;

/**
 * Counters incremented by a deliberate read-then-write (read the value, think, write value + 1,
 * record the increment), under an EXCLUSIVE ZooKeeper lock on {@code /chaos/counter/<name>}, in
 * three ways that the fault campaign compares:
 * <ul>
 * <li>{@link #incrementFenced}: the lock advice outside {@code @Transactional}, and the counter
 * row's fence ({@link JdbcLockFence} on {@code chaos_counter.fencing_token}) advanced to the
 * grant's token before the read, so that a zombie (a holder paused past its session while another
 * took the lock) is refused, and a newer holder waits at the fence for a zombie that passed it
 * first;</li>
 * <li>{@link #incrementUnfenced}: the same without the fence. A zombie's increment commits after
 * the newer holder read the value: two increments write the same value (a lost update). Only the
 * commit guard that the library adds to every transaction manager stands in its way, and it cannot
 * see a pause between its check and the commit;</li>
 * <li>{@link #incrementAsync}: the fenced increment through the asynchronous template
 * ({@link LockTemplate#async()}), the grant owned by no thread, the transaction run by the action
 * on the template's executor.</li>
 * </ul>
 * A counter's row is created at 0 by its first increment. Every call waits
 * {@code zk.lock.default-wait-time} for the lock; what each exception means for the transaction is
 * told on each method: whatever a method throws, nothing it did was committed.
 */
@Service
@Profile(ChaosConfiguration.PROFILE)
public class CounterService {

	/** The lock key of a counter is this prefix and its name. */
	public static final String LOCK_PREFIX = "/chaos/counter/";

	private static final Log logger = LogFactory.getLog(CounterService.class);

	private final CounterRepository counters;

	private final JdbcLockFence fence;

	private final TransactionTemplate transaction;

	private final LockTemplate lockTemplate;

	private final String instanceId;

	private final Duration thinkTime;

	/**
	 * Create the service.
	 * @param counters the counter tables
	 * @param dataSource the shared database, for the fence
	 * @param transactionManager its transaction manager, for the asynchronous increment's
	 * transaction
	 * @param lockTemplate the template of the asynchronous increment
	 * @param sample the instance id
	 * @param chaos the think time
	 */
	public CounterService(CounterRepository counters, DataSource dataSource,
			PlatformTransactionManager transactionManager, LockTemplate lockTemplate, SampleProperties sample,
			ChaosProperties chaos) {
		this.counters = counters;
		this.fence = JdbcLockFence.guardedRows(dataSource, "chaos_counter", "name", "fencing_token");
		this.transaction = new TransactionTemplate(transactionManager);
		this.lockTemplate = lockTemplate;
		this.instanceId = sample.getInstanceId();
		this.thinkTime = chaos.getThinkTime();
	}

	/**
	 * Increment a counter under its lock, fenced by the counter row's token, on the calling thread.
	 * @param name the counter's name: one lock path segment
	 * @param op the caller's operation id, recorded with the increment
	 * @return the committed increment
	 * @throws io.github.zklock.LockAcquisitionException if the lock was not granted within the
	 * wait time (the method did not run)
	 * @throws StaleFencingTokenException if a newer grant has written the row: this holder is a
	 * zombie (rolled back)
	 * @throws LockLostException if the grant was known lost or in doubt before the fence or at the
	 * commit guard (rolled back)
	 * @throws io.github.zklock.LockException if ZooKeeper could not serve the lock or the grant's
	 * token (not run, or rolled back)
	 * @throws io.github.zklock.InvalidLockPathException if the name is empty (not run)
	 */
	@DistributedLock(path = "/chaos/counter/#{#name}")
	@Transactional
	public CounterIncrement incrementFenced(String name, String op) {
		LockAssert.assertHeld();
		return increment(LockContext.require(), name, op, Via.FENCED);
	}

	/**
	 * Increment a counter under its lock without the fence: a zombie's increment is not refused.
	 * The grant's token is recorded all the same.
	 * @param name the counter's name: one lock path segment
	 * @param op the caller's operation id, recorded with the increment
	 * @return the committed increment
	 * @throws io.github.zklock.LockAcquisitionException if the lock was not granted within the
	 * wait time (the method did not run)
	 * @throws LockLostException if the grant was known lost or in doubt when its token was read or
	 * at the commit guard (rolled back)
	 * @throws io.github.zklock.LockException if ZooKeeper could not serve the lock or the grant's
	 * token (not run, or rolled back)
	 * @throws io.github.zklock.InvalidLockPathException if the name is empty (not run)
	 */
	@DistributedLock(path = "/chaos/counter/#{#name}")
	@Transactional
	public CounterIncrement incrementUnfenced(String name, String op) {
		LockAssert.assertHeld();
		return increment(LockContext.require(), name, op, Via.UNFENCED);
	}

	/**
	 * Increment a counter as {@link #incrementFenced} does, through the asynchronous template: the
	 * calling thread returns at once; once granted, the increment's transaction runs on the
	 * template's executor (the commit guard sees the grant there), and the grant is released after
	 * it.
	 * <p>When the registry tells the work of a lost grant ({@code zk.lock.interrupt-on-lost}, or a
	 * {@code lockAtMostFor} ceiling) after the action had completed and its transaction committed,
	 * before the release completed (a revocation or an expired session right after the commit, or
	 * during a partition that holds up the release), the template completes with the action's
	 * value and {@link LockResult#lockLostAfterWork()}: the increment is answered as committed,
	 * {@link CounterIncrement#lostAfterCommit()} set. A committed increment is answered as committed
	 * whatever the template reports, so that a failed future always means that nothing was
	 * committed.
	 * @param name the counter's name: one lock path segment
	 * @param op the caller's operation id, recorded with the increment
	 * @return the committed increment; or completed exceptionally, nothing committed, with the
	 * exceptions {@link #incrementFenced} throws
	 * @throws io.github.zklock.InvalidLockPathException if the name does not make a legal lock
	 * path (thrown at once, nothing requested)
	 */
	public CompletableFuture<CounterIncrement> incrementAsync(String name, String op) {
		LockRequest request = LockRequest.of(LOCK_PREFIX + name).withName(LOCK_PREFIX + "{name}");
		AtomicReference<@Nullable CounterIncrement> committed = new AtomicReference<>();
		CompletableFuture<CounterIncrement> answer = new CompletableFuture<>();
		this.lockTemplate.async().execute(request, (grant) -> {
			CounterIncrement increment = Objects
				.requireNonNull(this.transaction.execute((status) -> increment(grant, name, op, Via.ASYNC)));
			committed.set(increment);
			return CompletableFuture.completedFuture(increment);
		}).whenComplete((outcome, ex) -> {
			CounterIncrement increment = committed.get();
			if (increment == null) {
				answer.completeExceptionally((ex != null) ? unwrap(ex)
						: new IllegalStateException("No increment of '" + name + "' and no failure"));
			}
			else if (ex == null) {
				answer.complete(outcome.lockLostAfterWork() ? increment.withLostAfterCommit() : increment);
			}
			else {
				// Committed: the answer says so, whatever the template reported after the commit.
				Throwable failure = unwrap(ex);
				logger.warn("Increment " + op + " of '" + name + "' committed, then reported failed: " + failure);
				answer.complete((failure instanceof LockLostException) ? increment.withLostAfterCommit() : increment);
			}
		});
		return answer;
	}

	/**
	 * Read a counter's committed state, without a lock.
	 * @param name the counter's name
	 * @return its value and how many increments of it are recorded
	 */
	public CounterState state(String name) {
		return this.counters.state(name);
	}

	private CounterIncrement increment(LockHandle grant, String name, String op, Via via) {
		// The token first: a grant lost or in doubt already fails here, before any statement.
		long token = grant.fencingToken();
		long current = via.isFenced() ? fencedRead(grant, name, token) : plainRead(name);
		ThinkTime.park(this.thinkTime, "incrementing '" + name + "'");
		long value = current + 1;
		this.counters.updateValue(name, value);
		CounterIncrement increment = new CounterIncrement(op, name, value, token, this.instanceId, via.column(),
				false);
		this.counters.insertOp(increment);
		return increment;
	}

	/** Fence first, then read: what is read includes the write of a zombie that passed the fence first. */
	private long fencedRead(LockHandle grant, String name, long token) {
		try {
			this.fence.advance(grant, name);
		}
		catch (EmptyResultDataAccessException ex) {
			// The counter's first increment (no statement failed, the transaction is intact): the row
			// and its fence start here, at this grant's token.
			this.counters.create(name, token);
			return 0;
		}
		return this.counters.findValue(name)
			.orElseThrow(() -> new IllegalStateException("The fenced row of counter '" + name + "' is gone"));
	}

	private long plainRead(String name) {
		Long value = this.counters.findValue(name).orElse(null);
		if (value == null) {
			this.counters.create(name, 0);
			return 0;
		}
		return value;
	}

	private static Throwable unwrap(Throwable ex) {
		return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
	}

}
