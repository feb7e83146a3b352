package io.kolo.k8s;

/** Something Kubernetes refused or could not do, said in one line (no stack trace needed to understand it). */
public class KubernetesJobException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KubernetesJobException(String message) {
        super(message);
    }

    public KubernetesJobException(String message, Throwable cause) {
        super(message, cause);
    }
}
