package io.github.zklock.curator;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.zklock.LeadershipGrantedEvent;
import io.github.zklock.LeadershipListener;
import io.github.zklock.LeadershipRevokedEvent;

/**
 * Records the leadership events one {@link CuratorLeadership} publishes, in order, with the
 * {@link System#nanoTime()} they came at, and whether the instance said it led when it was told.
 * Shared by the leadership tests of the {@code curator} and {@code chaos} packages.
 */
public final class RecordingLeadershipListener implements LeadershipListener {

	/** The kind of a {@link LeadershipGrantedEvent}. */
	public static final String GRANTED = "granted";

	/** The kind of a {@link LeadershipRevokedEvent}. */
	public static final String REVOKED = "revoked";

	private final CuratorLeadership leadership;

	private final List<Event> events = new CopyOnWriteArrayList<>();

	private RecordingLeadershipListener(CuratorLeadership leadership) {
		this.leadership = leadership;
	}

	/**
	 * Record the events of a leadership, from now on.
	 * @param leadership the leadership to listen to
	 * @return the recorder
	 */
	public static RecordingLeadershipListener recording(CuratorLeadership leadership) {
		RecordingLeadershipListener listener = new RecordingLeadershipListener(leadership);
		leadership.addListener(listener);
		return listener;
	}

	@Override
	public void granted(LeadershipGrantedEvent event) {
		this.events.add(new Event(GRANTED, event.group(), event.participantId(), System.nanoTime(),
				leaderNow(event.group())));
	}

	@Override
	public void revoked(LeadershipRevokedEvent event) {
		this.events.add(new Event(REVOKED, event.group(), event.participantId(), System.nanoTime(),
				leaderNow(event.group())));
	}

	/** What {@code isLeader} says now; {@code false} when told on closing (it then throws). */
	private boolean leaderNow(String group) {
		try {
			return this.leadership.isLeader(group);
		}
		catch (IllegalStateException ex) {
			return false;
		}
	}

	/**
	 * Return the kinds of the events of a group, in order, for example
	 * {@code [granted, revoked]}.
	 * @param group the group
	 */
	public List<String> kinds(String group) {
		return this.events.stream().filter((event) -> event.group().equals(group)).map(Event::kind).toList();
	}

	/**
	 * Return the events of a group, in order.
	 * @param group the group
	 */
	public List<Event> events(String group) {
		return this.events.stream().filter((event) -> event.group().equals(group)).toList();
	}

	/**
	 * Return when the first event of a kind came for a group.
	 * @param kind {@link #GRANTED} or {@link #REVOKED}
	 * @param group the group
	 * @return its {@link System#nanoTime()}, or 0 if none came
	 */
	public long firstAt(String kind, String group) {
		return this.events.stream()
			.filter((event) -> event.group().equals(group) && event.kind().equals(kind))
			.mapToLong(Event::nanoTime)
			.findFirst()
			.orElse(0);
	}

	/**
	 * One event as recorded.
	 * @param kind {@link #GRANTED} or {@link #REVOKED}
	 * @param group the event's group
	 * @param participantId the event's participant id
	 * @param nanoTime when it came
	 * @param leaderWhenTold what {@code isLeader(group)} returned inside the listener
	 */
	public record Event(String kind, String group, String participantId, long nanoTime, boolean leaderWhenTold) {

	}

}
