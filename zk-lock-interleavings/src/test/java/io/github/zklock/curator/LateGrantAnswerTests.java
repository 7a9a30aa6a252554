package io.github.zklock.curator;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A listing that shows an acquisition's znode granted, answered half the negotiated session timeout
 * or more after it was sent (the process was paused, say, and its session may have expired and the
 * lock gone to another client meanwhile), grants nothing: the queue is listed again and the grant is
 * made on that answer, at the time it came. On the in-memory ZooKeeper with a clock moved by hand,
 * so that the answer is late by construction.
 */
class LateGrantAnswerTests {

	private final InMemoryZooKeeper zooKeeper = new InMemoryZooKeeper();

	private final AtomicLong clock = new AtomicLong();

	private final AtomicReference<ZnodeAcquisition> told = new AtomicReference<>();

	@Test
	void grantAnsweredLateIsListedAgainAndMadeOnTheNextAnswer() {
		ZnodeAcquisition acquisition = start();
		// Sent, not answered; then half the session timeout passes before the answers arrive.
		this.clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(this.zooKeeper.sessionTimeoutMs()) / 2);
		this.zooKeeper.reconnect();

		assertThat(this.zooKeeper.listings()).as("listed again after the late answer").isEqualTo(2);
		assertThat(this.told.get()).isSameAs(acquisition);
		assertThat(acquisition.granted()).isTrue();
		assertThat(acquisition.grantedAt()).isEqualTo(this.clock.get());
	}

	@Test
	void grantAnsweredInTimeIsMadeOnItsFirstListing() {
		ZnodeAcquisition acquisition = start();
		this.clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(this.zooKeeper.sessionTimeoutMs()) / 2 - 1);
		this.zooKeeper.reconnect();

		assertThat(this.zooKeeper.listings()).isEqualTo(1);
		assertThat(acquisition.granted()).isTrue();
		assertThat(acquisition.grantedAt()).isEqualTo(this.clock.get());
	}

	private ZnodeAcquisition start() {
		ZnodeAcquisition acquisition = new ZnodeAcquisition(this.zooKeeper, "/locks/late", Protocol.MUTEX, 1, false,
				this.told::set, this.clock::get, new OwnZnodes());
		// The requests are kept until the connection is back: sent, but not answered.
		this.zooKeeper.suspend();
		acquisition.start();
		assertThat(this.told.get()).isNull();
		return acquisition;
	}

}
