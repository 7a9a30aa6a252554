package io.github.zklock.sample.chaos;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;

import io.github.zklock.AsyncLockHandle;
import io.github.zklock.LockContext;
import io.github.zklock.LockHandle;
import io.github.zklock.LockLostException;
import io.github.zklock.LockRequest;
import io.github.zklock.LockResult;
import io.github.zklock.LockState;
import io.github.zklock.LockTemplate;
import io.github.zklock.test.AutoConfigureEmbeddedZooKeeper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A grant of the asynchronous template lost after its work committed: with interrupt-on-lost on
 * (the registry then tells the work of a grant no thread owns), the template completes with the
 * work's value and {@link LockResult#lockLostAfterWork()} (not with {@link LockLostException}, which
 * would have a caller run committed work again), and the asynchronous counter answers the committed
 * increment as committed, lost after its commit. The loss is made by deleting the grant's znode
 * with the application's own client (a revocation), once the work has committed and before it
 * returns, and told to the work before it returns.
 */
@SpringBootTest(properties = { "zk.lock.default-wait-time=1s", "zk.lock.interrupt-on-lost=true",
		"sample.instance-id=chaos-tests", "sample.chaos.think-time=5ms", "sample.report.enabled=false" })
@ActiveProfiles("chaos")
@AutoConfigureEmbeddedZooKeeper
@AutoConfigureMockMvc
class AsyncLossAfterCommitTests {

	@Autowired
	private MockMvcTester mvc;

	@Autowired
	private LockTemplate lockTemplate;

	@Autowired
	private CuratorFramework curator;

	@Autowired
	private PlatformTransactionManager transactionManager;

	@Autowired
	private JdbcClient jdbcClient;

	@Test
	void asynchronousTemplateReportsAGrantLostAfterItsWorkCompletedWithTheWorksValue() {
		CompletableFuture<LockResult<String>> outcome = this.lockTemplate.async()
			.execute(LockRequest.of("/chaos/raw-late-loss"), (grant) -> {
				lose(grant);
				return CompletableFuture.completedFuture("done");
			});
		assertThat(outcome).succeedsWithin(Duration.ofSeconds(30)).isEqualTo(LockResult.executedThenLost("done"));
	}

	@Test
	void asyncIncrementLostAfterItsCommitIsAnsweredAsCommitted() {
		ConfigurableTransactionManager manager = (ConfigurableTransactionManager) this.transactionManager;
		TransactionExecutionListener loseAfterCommit = new TransactionExecutionListener() {

			@Override
			public void afterCommit(TransactionExecution transaction, Throwable commitFailure) {
				LockContext.current()
					.filter((grant) -> grant.path().endsWith(CounterService.LOCK_PREFIX + "late-loss"))
					.ifPresent(AsyncLossAfterCommitTests.this::lose);
			}

		};
		manager.addListener(loseAfterCommit);
		try {
			assertThat(this.mvc.post()
				.uri("/chaos/counter/async/{name}", "late-loss")
				.param("op", "late-1")
				.exchange(Duration.ofSeconds(30))).hasStatusOk()
				.bodyJson()
				.isLenientlyEqualTo("{\"op\": \"late-1\", \"value\": 1, \"via\": \"async\", \"lostAfterCommit\": true}");
		}
		finally {
			manager.getTransactionExecutionListeners().remove(loseAfterCommit);
		}
		assertThat(this.jdbcClient.sql("SELECT COUNT(*) FROM chaos_counter_op WHERE op = 'late-1'")
			.query(Long.class)
			.single()).isOne();
	}

	/** Delete the grant's znode as another client would, and wait until the grant's work is told. */
	private void lose(LockHandle grant) {
		try {
			for (String child : this.curator.getChildren().forPath(grant.path())) {
				this.curator.delete().forPath(grant.path() + "/" + child);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("Cannot delete the znode of " + grant.path(), ex);
		}
		assertThat(((AsyncLockHandle) grant).whenLost().toCompletableFuture()).succeedsWithin(Duration.ofSeconds(10));
		assertThat(grant.state()).isEqualTo(LockState.LOST);
	}

}
