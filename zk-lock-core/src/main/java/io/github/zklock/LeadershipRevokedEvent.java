package io.github.zklock;

/**
 * This instance no longer leads a group it was granted: it gave leadership up
 * ({@link Leadership#yieldLeadership(String)}, or the leadership was closed), or its ZooKeeper
 * connection was suspended (leadership in doubt) or its session lost. Published to
 * {@link LeadershipListener}s and, in a Spring application, as an application event
 * ({@code @EventListener void on(LeadershipRevokedEvent event)}). Comes exactly once after each
 * {@link LeadershipGrantedEvent} of the same group.
 *
 * @param group the group, one ZooKeeper path segment
 * @param participantId this instance's participant id (see {@link Leadership#getParticipantId()})
 */
public record LeadershipRevokedEvent(String group, String participantId) {

	@Override
	public String toString() {
		return "Leadership of group '" + this.group + "' revoked from participant '" + this.participantId + "'";
	}

}
