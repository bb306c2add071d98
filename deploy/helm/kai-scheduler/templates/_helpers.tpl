{{/* The image tag: the component's, else global.tag, else the chart's appVersion; -fips when
global.fipsMode is "on". Call with (dict "root" $ "tag" <the component's image.tag>). */}}
{{- define "kai.imageTag" -}}
{{- $tag := .tag | default .root.Values.global.tag | default .root.Chart.AppVersion -}}
{{- if eq (toString .root.Values.global.fipsMode) "on" -}}{{- $tag = printf "%s-fips" $tag -}}{{- end -}}
{{- $tag -}}
{{- end -}}

{{/* kai's one image: [registry/]name:tag. Call with (dict "root" $ "tag" <tag>). */}}
{{- define "kai.image" -}}
{{- $reg := .root.Values.global.registry | default "" -}}
{{- $name := .root.Values.operator.image.name | default "kai" -}}
{{- if $reg -}}{{ $reg }}/{{- end -}}{{ $name }}:{{ include "kai.imageTag" . }}
{{- end -}}

{{/* A component's service section of the Config: enabled, image, resources, affinity.
Call with (dict "root" $ "values" <the component's values> "enabled" <bool>). */}}
{{- define "kai.service" -}}
service:
  enabled: {{ .enabled }}
  image:
    {{- if .root.Values.global.registry }}
    repository: {{ .root.Values.global.registry | quote }}
    {{- end }}
    name: {{ .root.Values.operator.image.name | default "kai" | quote }}
    tag: {{ include "kai.imageTag" (dict "root" .root "tag" ((.values.image | default dict).tag)) | quote }}
    pullPolicy: {{ (.values.image | default dict).pullPolicy | default .root.Values.global.imagePullPolicy }}
  {{- with .values.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .values.podDisruptionBudget }}
  podDisruptionBudget:
    {{- if hasKey . "enabled" }}
    enabled: {{ .enabled }}
    {{- end }}
    {{- if hasKey . "maxUnavailable" }}
    maxUnavailable: {{ .maxUnavailable }}
    {{- end }}
  {{- end }}
{{- end -}}

{{/* GPU sharing: global.gpuSharing, or any global.gpuSharingMode. */}}
{{- define "kai.gpuSharing" -}}
{{- if or .Values.global.gpuSharing .Values.global.gpuSharingMode -}}true{{- else -}}false{{- end -}}
{{- end -}}

{{/* Labels of every object the chart makes. */}}
{{- define "kai.labels" -}}
app.kubernetes.io/part-of: kai
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{/* Annotations that keep an object on uninstall (Helm) and on prune (Argo CD). */}}
{{- define "kai.keep" -}}
helm.sh/resource-policy: keep
argocd.argoproj.io/sync-options: Prune=false
{{- end -}}
