package io.github.zklock.aop;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.EmbeddedValueResolverAware;
import org.springframework.core.MethodClassKey;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

import io.github.zklock.annotation.LeaderOnly;
import io.github.zklock.curator.CuratorLeadership;

/**
 * Finds and validates {@link LeaderOnly @LeaderOnly} on methods, caching the resolved group per
 * method and target class, and keeps every group seen, so that they can be joined at start-up.
 *
 * <p>Thread-safe.
 */
public class LeaderOnlyOperationSource implements EmbeddedValueResolverAware {

	private final Map<MethodClassKey, Optional<String>> groups = new ConcurrentHashMap<>(16);

	private @Nullable StringValueResolver valueResolver;

	@Override
	public void setEmbeddedValueResolver(StringValueResolver resolver) {
		this.valueResolver = resolver;
	}

	/**
	 * Return the leadership group of a method, or {@code null} if it is not annotated.
	 * @param method the invoked method (may be an interface method)
	 * @param targetClass the target class, or {@code null} if unknown
	 * @return the group, or {@code null}
	 * @throws IllegalStateException if the group is empty or not one legal ZooKeeper path
	 * segment, or the method returns a primitive other than {@code void}
	 */
	public @Nullable String getGroup(Method method, @Nullable Class<?> targetClass) {
		MethodClassKey key = new MethodClassKey(method, targetClass);
		Optional<String> group = this.groups.get(key);
		if (group == null) {
			group = Optional.ofNullable(findGroup(method, targetClass));
			this.groups.put(key, group);
		}
		return group.orElse(null);
	}

	/**
	 * Return every group found so far on validated or called methods.
	 * @return a snapshot of the groups
	 */
	public Set<String> getKnownGroups() {
		return this.groups.values().stream().flatMap(Optional::stream).collect(Collectors.toUnmodifiableSet());
	}

	private @Nullable String findGroup(Method method, @Nullable Class<?> targetClass) {
		Method specificMethod = AopUtils.getMostSpecificMethod(method, targetClass);
		LeaderOnly annotation = LockOperationSource.findAnnotation(specificMethod, method, LeaderOnly.class);
		if (annotation == null) {
			return null;
		}
		String where = ClassUtils.getQualifiedMethodName(specificMethod, targetClass);
		Class<?> returnType = specificMethod.getReturnType();
		if (returnType.isPrimitive() && returnType != void.class) {
			throw new IllegalStateException("@LeaderOnly on " + where + ": the call is skipped with null on an "
					+ "instance that does not lead, which the return type " + returnType.getName() + " cannot hold. "
					+ "Return a wrapper type, Optional or void");
		}
		String group = annotation.group();
		if (this.valueResolver != null && StringUtils.hasText(group)) {
			group = this.valueResolver.resolveStringValue(group);
		}
		return checkGroup(group, where);
	}

	private static String checkGroup(@Nullable String group, String where) {
		try {
			return CuratorLeadership.checkGroup(group);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("@LeaderOnly on " + where + ": " + ex.getMessage()
					+ "; name the leadership group, such as group = \"billing\"", ex);
		}
	}

}
