package io.github.zklock.aop;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;
import org.springframework.util.ClassUtils;

/**
 * Finds the calls a class makes to its own advised methods, from its bytecode: a
 * {@code @DistributedLock} method called as {@code this.purchase(...)} from another method of its
 * class goes around the Spring proxy and runs without its lock.
 *
 * <p>A call counts when an instance method (or constructor) of the class or of one of its
 * superclasses invokes an advised method with an owner in that hierarchy. Recursion (a method
 * calling itself) is left out: it runs under the lock its outer call took. The receiver is not
 * tracked, so a call on another instance of the same class is reported too: the finding says
 * "may".
 */
final class SelfInvocations {

	private SelfInvocations() {
	}

	/**
	 * Find the self-invocations of the given methods.
	 * @param targetClass the bean's class (the user class, not a proxy)
	 * @param advised the advised methods of that class
	 * @return one finding per calling method and called method, as
	 * {@code "Caller.method(..) calls Target.advised(..)"}; empty if there are none or the class
	 * files cannot be read (detection is best effort)
	 */
	static List<String> find(Class<?> targetClass, Collection<Method> advised) {
		Map<String, Method> bySignature = new HashMap<>();
		for (Method method : advised) {
			bySignature.put(method.getName() + Type.getMethodDescriptor(method), method);
		}
		Set<String> owners = new HashSet<>();
		List<Class<?>> hierarchy = new ArrayList<>();
		for (Class<?> type = targetClass; type != null && type != Object.class; type = type.getSuperclass()) {
			owners.add(Type.getInternalName(type));
			hierarchy.add(type);
		}
		Set<String> findings = new LinkedHashSet<>();
		for (Class<?> type : hierarchy) {
			byte[] bytes = classFile(type);
			if (bytes != null) {
				new ClassReader(bytes).accept(new CallFinder(type, owners, bySignature, findings),
						ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
			}
		}
		return List.copyOf(findings);
	}

	private static byte[] classFile(Class<?> type) {
		try (InputStream in = type.getResourceAsStream(ClassUtils.getClassFileName(type))) {
			return (in != null) ? in.readAllBytes() : null;
		}
		catch (IOException ex) {
			return null;
		}
	}

	private static final class CallFinder extends ClassVisitor {

		private final Class<?> type;

		private final Set<String> owners;

		private final Map<String, Method> advised;

		private final Set<String> findings;

		CallFinder(Class<?> type, Set<String> owners, Map<String, Method> advised, Set<String> findings) {
			super(SpringAsmInfo.ASM_VERSION);
			this.type = type;
			this.owners = owners;
			this.advised = advised;
			this.findings = findings;
		}

		@Override
		public MethodVisitor visitMethod(int access, String callerName, String callerDescriptor, String signature,
				String[] exceptions) {
			if ((access & Opcodes.ACC_STATIC) != 0) {
				return null;
			}
			String caller = callerName + callerDescriptor;
			return new MethodVisitor(SpringAsmInfo.ASM_VERSION) {

				@Override
				public void visitMethodInsn(int opcode, String owner, String name, String descriptor,
						boolean isInterface) {
					String callee = name + descriptor;
					Method target = CallFinder.this.advised.get(callee);
					if (target != null && opcode != Opcodes.INVOKESTATIC && !callee.equals(caller)
							&& CallFinder.this.owners.contains(owner)) {
						CallFinder.this.findings.add(describe(CallFinder.this.type, callerName, callerDescriptor)
								+ " calls " + describe(target));
					}
				}

			};
		}

		private static String describe(Class<?> type, String name, String descriptor) {
			String[] lambda = name.split("\\$");
			if (lambda.length == 3 && lambda[0].equals("lambda")) {
				// javac's name of a lambda body: lambda$<enclosing method>$<n>
				return type.getSimpleName() + "." + lambda[1] + " (a lambda in it)";
			}
			StringBuilder text = new StringBuilder(type.getSimpleName()).append('.').append(name).append('(');
			Type[] arguments = Type.getArgumentTypes(descriptor);
			for (int i = 0; i < arguments.length; i++) {
				text.append((i > 0) ? ", " : "").append(ClassUtils.getShortName(arguments[i].getClassName()));
			}
			return text.append(')').toString();
		}

		private static String describe(Method method) {
			return describe(method.getDeclaringClass(), method.getName(), Type.getMethodDescriptor(method));
		}

	}

}
