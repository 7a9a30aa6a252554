package io.github.zklock.benchmarks.run;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The ping-pong scenario's turn: two sides mapping one file take strict turns, JVM 1 first, and a
 * side whose turn never comes gives up at its deadline.
 */
class PingPongTurnTests {

	@TempDir
	Path directory;

	@Test
	void twoSidesOfOneFileStrictlyAlternate() throws Exception {
		Path file = this.directory.resolve("turn");
		List<Integer> order = new CopyOnWriteArrayList<>();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		ExecutorService sides = Executors.newFixedThreadPool(2);
		try {
			List<Future<?>> done = List.of(sides.submit(() -> take(new PingPongTurn(file, 2), 2, order, deadline)),
					sides.submit(() -> take(new PingPongTurn(file, 1), 1, order, deadline)));
			for (Future<?> side : done) {
				side.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			sides.shutdownNow();
		}
		assertThat(order).hasSize(200);
		for (int i = 0; i < order.size(); i++) {
			assertThat(order.get(i)).as("turn %d", i).isEqualTo(1 + i % 2);
		}
	}

	@Test
	void aTurnThatNeverComesEndsAtTheDeadline() throws Exception {
		PingPongTurn second = new PingPongTurn(this.directory.resolve("turn"), 2);
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
		assertThat(second.await(deadline)).isFalse();
		assertThat(System.nanoTime() - deadline).isNotNegative();
	}

	@Test
	void onlyTwoSides() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new PingPongTurn(this.directory.resolve("turn"), 3))
			.withMessageContaining("JVMs 1 and 2");
	}

	private static Void take(PingPongTurn turn, int side, List<Integer> order, long deadline) {
		for (int i = 0; i < 100; i++) {
			assertThat(turn.await(deadline)).as("side %d's turn %d came", side, i).isTrue();
			order.add(side);
			turn.pass();
		}
		return null;
	}

}
