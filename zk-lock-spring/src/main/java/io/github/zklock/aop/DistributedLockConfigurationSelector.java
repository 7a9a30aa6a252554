package io.github.zklock.aop;

import java.util.ArrayList;
import java.util.List;

import org.springframework.context.annotation.ImportSelector;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;

import io.github.zklock.transaction.LockCommitGuardConfiguration;

/**
 * Selects what {@link io.github.zklock.annotation.EnableDistributedLocks @EnableDistributedLocks}
 * imports: the auto-proxy creator, the advice, and the commit guard when spring-tx is on the class
 * path.
 */
public class DistributedLockConfigurationSelector implements ImportSelector {

	private static final String TRANSACTION_MANAGER_CLASS = "org.springframework.transaction.ConfigurableTransactionManager";

	@Override
	public String[] selectImports(AnnotationMetadata importingClassMetadata) {
		List<String> imports = new ArrayList<>(3);
		imports.add(DistributedLockProxyRegistrar.class.getName());
		imports.add(DistributedLockConfiguration.class.getName());
		if (ClassUtils.isPresent(TRANSACTION_MANAGER_CLASS, getClass().getClassLoader())) {
			imports.add(LockCommitGuardConfiguration.class.getName());
		}
		return imports.toArray(String[]::new);
	}

}
