package io.github.zklock.benchmarks.run;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.LockSupport;

/**
 * Whose turn it is in the ping-pong scenario, so that two JVMs strictly alternate on one key: a
 * counter in a file both map into memory, JVM 1's turn while it is even and JVM 2's while it is
 * odd. Only the JVM whose turn it is advances it, once it has released the lock; the other waits
 * for it outside the lock, and the wait it measures starts when its turn comes. Waiting spins
 * briefly, then parks for tens of microseconds at a time, the same for every contender.
 */
final class PingPongTurn {

	private static final VarHandle COUNTER = MethodHandles.byteBufferViewVarHandle(long[].class,
			ByteOrder.nativeOrder());

	private static final int SPINS = 1_000;

	private final MappedByteBuffer counter;

	private final long mine;

	/**
	 * @param file the file both JVMs map (created if missing; its first 8 bytes are the counter)
	 * @param jvm 1 or 2
	 * @throws IOException if the file cannot be mapped
	 */
	PingPongTurn(Path file, int jvm) throws IOException {
		if (jvm != 1 && jvm != 2) {
			throw new IllegalArgumentException("Ping-pong runs on JVMs 1 and 2, not " + jvm);
		}
		try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
				StandardOpenOption.WRITE)) {
			this.counter = channel.map(FileChannel.MapMode.READ_WRITE, 0, Long.BYTES);
		}
		this.mine = jvm - 1;
	}

	/**
	 * Wait until it is this JVM's turn.
	 * @param deadline the end of the run, in {@link System#nanoTime()}
	 * @return {@code true} on this JVM's turn, {@code false} once the deadline passed (checked first)
	 */
	boolean await(long deadline) {
		int spins = 0;
		while (true) {
			if (System.nanoTime() - deadline >= 0) {
				return false;
			}
			if ((((long) COUNTER.getVolatile(this.counter, 0)) & 1) == this.mine) {
				return true;
			}
			if (++spins < SPINS) {
				Thread.onSpinWait();
			}
			else {
				LockSupport.parkNanos(20_000);
			}
		}
	}

	/** Give the turn to the other JVM: called on this JVM's turn only. */
	void pass() {
		COUNTER.setVolatile(this.counter, 0, (long) COUNTER.getVolatile(this.counter, 0) + 1);
	}

}
