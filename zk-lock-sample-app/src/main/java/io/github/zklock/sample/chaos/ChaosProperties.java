package io.github.zklock.sample.chaos;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the fault campaign's workloads, bound to {@code sample.chaos.*}
 * when the {@code chaos} profile is active.
 */
@ConfigurationProperties("sample.chaos")
public class ChaosProperties {

	/**
	 * Pause between reading a counter or the two balances of a transfer and writing the new
	 * values, the thread parked meanwhile. Widens the window in which a process pause or a lost
	 * lock falls between the read and the write; each call holds its lock for this long longer.
	 */
	private Duration thinkTime = Duration.ofMillis(20);

	public Duration getThinkTime() {
		return this.thinkTime;
	}

	public void setThinkTime(Duration thinkTime) {
		this.thinkTime = thinkTime;
	}

}
