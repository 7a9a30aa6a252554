package io.github.zklock;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** Placeholder until the helper's version is copied in. */
public interface Leadership {

	boolean isLeader(String group);

	boolean awaitLeadership(String group, Duration timeout) throws InterruptedException;

	void yieldLeadership(String group);

	Optional<String> getLeader(String group);

	Set<String> getGroups();

	String getParticipantId();

}
