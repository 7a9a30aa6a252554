package io.github.zklock.sample.chaos;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.http.HttpStatus;
import org.springframework.test.web.servlet.assertj.MockMvcTester;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;

import io.github.zklock.LockException;
import io.github.zklock.LockLostException;
import io.github.zklock.LockMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.BDDMockito.given;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link ChaosExceptionHandler}: the answers to the failures that a single process on an
 * embedded ZooKeeper does not produce on demand (a lost lock, ZooKeeper unreachable, a database
 * failure), with the services stubbed.
 */
class ChaosExceptionHandlerTests {

	private final CounterService counters = mock();

	private final TransferService transfers = mock();

	private final MockMvcTester mvc = MockMvcTester.create(MockMvcBuilders
		.standaloneSetup(new ChaosController(this.counters, this.transfers))
		.setControllerAdvice(new ChaosExceptionHandler())
		.build());

	@Test
	void lockLostBeforeTheCommitIsGone() {
		given(this.counters.incrementFenced(anyString(), anyString()))
			.willThrow(new LockLostException("/locks/chaos/counter/c", LockMode.EXCLUSIVE, "session expired"));
		assertThat(this.mvc.post().uri("/chaos/counter/fenced/c").param("op", "lost")).hasStatus(HttpStatus.GONE)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"lock-lost\", \"op\": \"lost\", \"lockPath\": \"/locks/chaos/counter/c\"}");
	}

	@Test
	void asyncIncrementFailedWithALostLockIsGoneToo() {
		given(this.counters.incrementAsync(anyString(), anyString())).willReturn(CompletableFuture
			.failedFuture(new LockLostException("/locks/chaos/counter/c", LockMode.EXCLUSIVE, "session expired")));
		assertThat(this.mvc.post().uri("/chaos/counter/async/c").param("op", "lost").exchange(Duration.ofSeconds(10)))
			.hasStatus(HttpStatus.GONE)
			.bodyJson()
			.extractingPath("$.error")
			.isEqualTo("lock-lost");
	}

	@Test
	void zooKeeperUnavailableIsServiceUnavailable() {
		given(this.counters.incrementUnfenced(anyString(), anyString()))
			.willThrow(new LockException("ZooKeeper is not connected"));
		assertThat(this.mvc.post().uri("/chaos/counter/unfenced/c").param("op", "down"))
			.hasStatus(HttpStatus.SERVICE_UNAVAILABLE)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"zookeeper-unavailable\", \"op\": \"down\"}");
	}

	@Test
	void anyOtherFailureIsUnexpectedWithAnUnknownOutcome() {
		given(this.transfers.transfer(0, 1, 1, "db")).willThrow(new DataAccessResourceFailureException("connection reset"));
		assertThat(this.mvc.post().uri("/chaos/transfer").param("from", "0").param("to", "1").param("amount", "1")
			.param("op", "db")).hasStatus(HttpStatus.INTERNAL_SERVER_ERROR)
			.bodyJson()
			.isLenientlyEqualTo("{\"error\": \"unexpected\", \"op\": \"db\", "
					+ "\"exception\": \"org.springframework.dao.DataAccessResourceFailureException\"}");
	}

}
